import { lazyPage } from '../ui/lazy.ts';
import type { AppRoute } from '../ui/routes.ts';
import { SessionList } from './SessionList.tsx';

// The list is the page after sign-in (in the first load); the session page and its player are
// lazy chunks.
const SessionPage = lazyPage(() => import('./SessionPage.tsx'), 'SessionPage');

export const sessionRoutes: AppRoute[] = [
  { path: '/sessions', element: <SessionList />, access: 'signed-in' },
  { path: '/sessions/:id', element: <SessionPage />, access: 'signed-in' },
];
