import type { AppRoute } from '../ui/routes.ts';
import { SharePage } from './SharePage.tsx';

/** Public: a share link opens without signing in. */
export const shareRoutes: AppRoute[] = [{ path: '/share/:token', element: <SharePage />, access: 'public' }];
