import type { ReactNode } from 'react';

/**
 * A page of the app. Each feature folder exports its routes (`routes.tsx`); `app/App.tsx` puts
 * `signedIn` ones behind the sign-in check and inside the header with the switcher.
 */
export interface AppRoute {
  path: string;
  element: ReactNode;
  access: 'public' | 'signed-in';
}
