// Accounts: people (users), their sign-in (password, e-mailed links, two-factor TOTP), e-mail
// verification, password reset and dashboard sessions.
// Other modules import this module only through this file (servers/api/README.md, Layout); none
// needs anything from it yet (organizations and their members come next). The composition files
// import its routes and `findLiveSession` (the session resolver of the authentication plugin).
export {};
