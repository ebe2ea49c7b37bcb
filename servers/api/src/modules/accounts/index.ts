// Accounts: people (users), their sign-in (password, e-mailed links, two-factor TOTP), e-mail
// verification, password reset and dashboard sessions.
// Other modules import this module only through this file (servers/api/README.md, Layout):
// organizations sign people in when they accept an invitation; passkeys check a password again
// (or a recent sign-in) and start sessions; OAuth sign-in makes accounts and hands a person with
// two-factor sign-in on to the MFA challenge. The composition files import its
// routes and `findLiveSession` (the session resolver of the authentication plugin).

export { createMfaChallenge, mfaEnabled } from './mfa.ts';
export { createVerifiedUser, resetPassword, signInLink } from './operator.ts';
export { checkPassword, hashPassword, verifyPassword } from './passwords.ts';
export { createLimiter, SIGN_IN_LIMITS } from './rate-limits.ts';
export { findUserByEmail, findUserById, insertUser, sessionStartedAt } from './repository.ts';
export {
  prospectiveUser,
  refuseForeignOrigins,
  type SignInGate,
  type SignInMethod,
  signIn,
} from './sign-in.ts';
export { signedInViewSchema, toUserView } from './views.ts';
