import type { ReactNode } from 'react';

/**
 * A page of the app. Each feature folder exports its routes (`routes.tsx`); `app/App.tsx` puts
 * `signedIn` ones behind the sign-in check and inside the header with the switcher. A page that
 * needs a heavy library (the replay player, charts) is `React.lazy`, so the first load stays
 * small (`pnpm --filter @svc/dashboard size`).
 */
export interface AppRoute {
  path: string;
  element: ReactNode;
  access: 'public' | 'signed-in';
}
