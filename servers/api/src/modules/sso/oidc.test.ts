import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcIdp, type TestOidcIdp } from '../../../test/sso-oidc-idp.ts';
import { createDestinationPolicy, parseAllowedHosts } from '../../platform/http/destination-policy.ts';
import { createPolicyFetch } from '../../platform/http/policy-fetch.ts';
import { oidcConfiguration } from './oidc.ts';

// Discovery of an organization's OpenID issuer goes through the destination policy on the address
// connected to (a real OpenID provider, oidc-provider, on 127.0.0.1).

describe('oidcConfiguration', () => {
  let idp: TestOidcIdp;

  beforeAll(async () => {
    idp = await startOidcIdp();
  });
  afterAll(async () => {
    await idp?.close();
  });

  const settings = () => ({ issuer: idp.issuer, clientId: 'client', clientSecret: 'secret' });

  it('discovers an issuer the policy allows', async () => {
    const allowed = createPolicyFetch(createDestinationPolicy(parseAllowedHosts('127.0.0.1').allowed));
    const configuration = await oidcConfiguration(settings(), 'allowed', allowed);
    expect(configuration.serverMetadata().issuer).toBe(idp.issuer);
    expect(configuration.serverMetadata().token_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
  });

  it('refuses, with the reason, an issuer on an address the policy refuses, whatever an earlier check found', async () => {
    const strict = createPolicyFetch(createDestinationPolicy());
    await expect(oidcConfiguration(settings(), 'strict', strict)).rejects.toMatchObject({
      status: 400,
      code: 'invalid',
      message: expect.stringMatching(/could not be discovered: .*is not allowed: .*loopback/),
    });
  });
});
