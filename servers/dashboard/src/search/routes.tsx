import { lazyPage } from '../ui/lazy.ts';
import type { AppRoute } from '../ui/routes.ts';

// The search page is a lazy chunk; the header's search box (app/Shell.tsx) opens it.
const SearchPage = lazyPage(() => import('./SearchPage.tsx'), 'SearchPage');

export const searchRoutes: AppRoute[] = [{ path: '/search', element: <SearchPage />, access: 'signed-in' }];
