import type { AppRoute } from '../ui/routes.ts';
import { SessionList } from './SessionList.tsx';

export const sessionRoutes: AppRoute[] = [
  { path: '/sessions', element: <SessionList />, access: 'signed-in' },
];
