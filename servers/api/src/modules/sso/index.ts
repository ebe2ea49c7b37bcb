// Organization SSO (issue 26): an organization's SAML 2.0 and OpenID Connect connections, sign-in
// through them (just-in-time membership), the sign-in gate that requires SSO of the people of its
// verified domains and joins them to it, and the domains an organization verifies by DNS. After
// organizations; projects and the rest come after. Other modules import this module only through
// this file (servers/api/README.md, Layout); the composition files import its routes and gate
// directly.

export { createDomainRecheckWorker, createTxtResolver } from './domains.ts';
export type { SsoChange } from './routes.ts';
