import type { AppRoute } from '../ui/routes.ts';
import { MagicLink } from './MagicLink.tsx';
import { SignIn } from './SignIn.tsx';

export const authRoutes: AppRoute[] = [
  { path: '/login', element: <SignIn />, access: 'public' },
  { path: '/magic-link', element: <MagicLink />, access: 'public' },
];
