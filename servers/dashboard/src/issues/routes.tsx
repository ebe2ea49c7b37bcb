import { lazyPage } from '../ui/lazy.ts';
import type { AppRoute } from '../ui/routes.ts';

const IssueDetail = lazyPage(() => import('./IssueDetail.tsx'), 'IssueDetail');
const IssueList = lazyPage(() => import('./IssueList.tsx'), 'IssueList');

export const issueRoutes: AppRoute[] = [
  { path: '/issues', element: <IssueList />, access: 'signed-in' },
  { path: '/issues/:id', element: <IssueDetail />, access: 'signed-in' },
];
