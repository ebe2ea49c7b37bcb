// OAuth sign-in: Google and Microsoft through OpenID Connect, GitHub through OAuth 2 and its
// e-mail API; the identities linked to an account (servers/api/README.md, Sign-in with Google,
// Microsoft and GitHub). Other modules import this module only through this file; the
// composition files import its routes (`routes.ts`, `identity-routes.ts`) directly.

export { listIdentities } from './repository.ts';
