import { lazyPage } from '../ui/lazy.ts';
import type { AppRoute } from '../ui/routes.ts';

const SharePage = lazyPage(() => import('./SharePage.tsx'), 'SharePage');

/** Public: a share link opens without signing in. */
export const shareRoutes: AppRoute[] = [{ path: '/share/:token', element: <SharePage />, access: 'public' }];
