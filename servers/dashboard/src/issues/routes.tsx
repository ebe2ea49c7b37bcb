import type { AppRoute } from '../ui/routes.ts';
import { IssueDetail } from './IssueDetail.tsx';
import { IssueList } from './IssueList.tsx';

export const issueRoutes: AppRoute[] = [
  { path: '/issues', element: <IssueList />, access: 'signed-in' },
  { path: '/issues/:id', element: <IssueDetail />, access: 'signed-in' },
];
