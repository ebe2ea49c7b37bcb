import { lazy } from 'react';
import type { AppRoute } from '../ui/routes.ts';

// Lazy chunks: the charts bring uPlot, which the first load does without.
const CallList = lazy(() => import('./CallList.tsx').then((module) => ({ default: module.CallList })));
const CallOverview = lazy(() =>
  import('./CallOverview.tsx').then((module) => ({ default: module.CallOverview })),
);
const CallPage = lazy(() => import('./CallPage.tsx').then((module) => ({ default: module.CallPage })));

export const callRoutes: AppRoute[] = [
  { path: '/calls', element: <CallList />, access: 'signed-in' },
  { path: '/calls/overview', element: <CallOverview />, access: 'signed-in' },
  { path: '/calls/:id', element: <CallPage />, access: 'signed-in' },
];
