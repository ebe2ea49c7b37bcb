// Passkeys: a person's WebAuthn credentials, registered and removed under `/v1/me/passkeys`, and
// sign-in with them under `/auth/passkeys` (servers/api/README.md, Passkeys). Accounts come
// before (people, sessions, `signIn`). Other modules import this module only through this file
// (OAuth counts a person's passkeys as a way in); the composition file registers its routes.

export { default as passkeyAuthRoutes } from './auth-routes.ts';
export { default as passkeyMeRoutes } from './me-routes.ts';
export { countPasskeys } from './repository.ts';
