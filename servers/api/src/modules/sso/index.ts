// Organization SSO (issue 26): SAML 2.0 and OpenID Connect connections, and the domains an
// organization verifies by DNS. After organizations; projects and the rest come after. Other
// modules import this module only through this file (servers/api/README.md, Layout).

export { createDomainRecheckWorker, createTxtResolver } from './domains.ts';
