import type { AppRoute } from '../ui/routes.ts';
import { SessionList } from './SessionList.tsx';
import { SessionPage } from './SessionPage.tsx';

export const sessionRoutes: AppRoute[] = [
  { path: '/sessions', element: <SessionList />, access: 'signed-in' },
  { path: '/sessions/:id', element: <SessionPage />, access: 'signed-in' },
];
