import { Navigate, Route, Routes } from 'react-router';
import { authRoutes } from '../auth/routes.tsx';
import { sessionRoutes } from '../sessions/routes.tsx';
import { shareRoutes } from '../share/routes.tsx';
import type { AppRoute } from '../ui/routes.ts';
import { SignedIn } from './SignedIn.tsx';

// Every feature folder brings its pages; this file only puts them together.
const ROUTES: AppRoute[] = [...authRoutes, ...sessionRoutes, ...shareRoutes];

/** The app's routes: the sign-in pages are public; everything else needs a session. */
export function App() {
  return (
    <Routes>
      {ROUTES.map((route) => (
        <Route
          key={route.path}
          path={route.path}
          element={route.access === 'public' ? route.element : <SignedIn>{route.element}</SignedIn>}
        />
      ))}
      <Route path="*" element={<Navigate to="/sessions" replace />} />
    </Routes>
  );
}
