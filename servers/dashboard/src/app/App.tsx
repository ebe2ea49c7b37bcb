import { type ReactNode, Suspense } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { authRoutes } from '../auth/routes.tsx';
import { callRoutes } from '../calls/routes.tsx';
import { insightRoutes } from '../insights/routes.tsx';
import { issueRoutes } from '../issues/routes.tsx';
import { notificationRoutes } from '../notifications/routes.tsx';
import { searchRoutes } from '../search/routes.tsx';
import { sessionRoutes } from '../sessions/routes.tsx';
import { settingsRoutes } from '../settings/routes.tsx';
import { shareRoutes } from '../share/routes.tsx';
import type { AppRoute } from '../ui/routes.ts';
import { SignedIn } from './SignedIn.tsx';

// Every feature folder brings its pages; this file only puts them together.
const ROUTES: AppRoute[] = [
  ...authRoutes,
  ...sessionRoutes,
  ...callRoutes,
  ...issueRoutes,
  ...insightRoutes,
  ...notificationRoutes,
  ...searchRoutes,
  ...settingsRoutes,
  ...shareRoutes,
];

/** A page that may be a lazy chunk (`React.lazy` in its area's routes.tsx): a note while it loads. */
function loading(element: ReactNode) {
  return <Suspense fallback={<p aria-busy="true">Loading…</p>}>{element}</Suspense>;
}

/** The app's routes: the sign-in pages are public; everything else needs a session. */
export function App() {
  return (
    <Routes>
      {ROUTES.map((route) => (
        <Route
          key={route.path}
          path={route.path}
          element={
            route.access === 'public' ? loading(route.element) : <SignedIn>{loading(route.element)}</SignedIn>
          }
        />
      ))}
      <Route path="*" element={<Navigate to="/sessions" replace />} />
    </Routes>
  );
}
