import { lazyPage } from '../ui/lazy.ts';
import type { AppRoute } from '../ui/routes.ts';

// Lazy chunks: the vitals chart brings uPlot, the heatmaps rrweb's Replayer; the first load
// carries none of these pages.
const Overview = lazyPage(() => import('./Overview.tsx'), 'Overview');
const Vitals = lazyPage(() => import('./Vitals.tsx'), 'Vitals');
const Heatmaps = lazyPage(() => import('./Heatmaps.tsx'), 'Heatmaps');
const FunnelList = lazyPage(() => import('./FunnelList.tsx'), 'FunnelList');
const NewFunnel = lazyPage(() => import('./FunnelBuilder.tsx'), 'NewFunnel');
const FunnelPage = lazyPage(() => import('./FunnelPage.tsx'), 'FunnelPage');
const Releases = lazyPage(() => import('./Releases.tsx'), 'Releases');

export const insightRoutes: AppRoute[] = [
  { path: '/overview', element: <Overview />, access: 'signed-in' },
  { path: '/vitals', element: <Vitals />, access: 'signed-in' },
  { path: '/heatmaps', element: <Heatmaps />, access: 'signed-in' },
  { path: '/funnels', element: <FunnelList />, access: 'signed-in' },
  { path: '/funnels/new', element: <NewFunnel />, access: 'signed-in' },
  { path: '/funnels/:id', element: <FunnelPage />, access: 'signed-in' },
  { path: '/releases', element: <Releases />, access: 'signed-in' },
];
