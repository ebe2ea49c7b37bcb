import type { AppRoute } from '../ui/routes.ts';
import { AcceptInvitation } from './AcceptInvitation.tsx';
import { MagicLink } from './MagicLink.tsx';
import { MagicLinkRequest } from './MagicLinkRequest.tsx';
import { ForgotPassword, ResetPassword } from './PasswordReset.tsx';
import { SignIn } from './SignIn.tsx';
import { SignUp } from './SignUp.tsx';
import { SsoSignIn } from './sso/SsoSignIn.tsx';
import { VerifyEmail } from './VerifyEmail.tsx';

// The paths of the links the server e-mails (servers/api, accounts/emails.ts and orgs/emails.ts):
// /verify-email, /reset-password, /magic-link and /accept-invitation, each with `?token=`.
export const authRoutes: AppRoute[] = [
  { path: '/login', element: <SignIn />, access: 'public' },
  { path: '/signup', element: <SignUp />, access: 'public' },
  { path: '/verify-email', element: <VerifyEmail />, access: 'public' },
  { path: '/forgot-password', element: <ForgotPassword />, access: 'public' },
  { path: '/reset-password', element: <ResetPassword />, access: 'public' },
  { path: '/sign-in-link', element: <MagicLinkRequest />, access: 'public' },
  { path: '/magic-link', element: <MagicLink />, access: 'public' },
  { path: '/accept-invitation', element: <AcceptInvitation />, access: 'public' },
  { path: '/sso', element: <SsoSignIn />, access: 'public' },
];
