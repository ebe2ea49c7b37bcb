import { lazyPage } from '../ui/lazy.ts';
import type { AppRoute } from '../ui/routes.ts';

// Lazy chunks: the charts bring uPlot, which the first load does without.
const CallList = lazyPage(() => import('./CallList.tsx'), 'CallList');
const CallOverview = lazyPage(() => import('./CallOverview.tsx'), 'CallOverview');
const CallPage = lazyPage(() => import('./CallPage.tsx'), 'CallPage');

export const callRoutes: AppRoute[] = [
  { path: '/calls', element: <CallList />, access: 'signed-in' },
  { path: '/calls/overview', element: <CallOverview />, access: 'signed-in' },
  { path: '/calls/:id', element: <CallPage />, access: 'signed-in' },
];
