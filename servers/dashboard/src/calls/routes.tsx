import type { AppRoute } from '../ui/routes.ts';
import { CallList } from './CallList.tsx';
import { CallOverview } from './CallOverview.tsx';
import { CallPage } from './CallPage.tsx';

export const callRoutes: AppRoute[] = [
  { path: '/calls', element: <CallList />, access: 'signed-in' },
  { path: '/calls/overview', element: <CallOverview />, access: 'signed-in' },
  { path: '/calls/:id', element: <CallPage />, access: 'signed-in' },
];
