import { createHash, randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import * as client from 'openid-client';
import type { AllowedHosts, DestinationPolicy } from '../../platform/http/destination-policy.ts';
import { invalid } from '../../platform/http/errors.ts';

// OpenID Connect for organization SSO, with openid-client: the issuer's discovery (cached per
// connection version), the authorization request (code flow, state, nonce, PKCE S256) and the
// callback's full validation (the ID token's signature by the issuer's keys, issuer, audience,
// expiry, nonce; the state; the PKCE verifier).

/** How long discovered issuer metadata is reused. */
const DISCOVERY_TTL_MS = 10 * 60_000;
const DISCOVERY_TIMEOUT_S = 10;

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/**
 * Why the server must not fetch this issuer, or undefined: https only (http where the operator
 * allowed the host, SVC_WEBHOOK_ALLOWED_HOSTS, as for a provider on this machine), and no address
 * the webhooks' destination policy refuses (loopback, private and link-local ranges) unless the
 * operator allowed it.
 */
export async function issuerRefusal(
  issuer: string,
  policy: DestinationPolicy,
  allowed: AllowedHosts | undefined,
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'the issuer is not a URL';
  }
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const operatorAllowed = allowed?.hosts.has(hostname.toLowerCase()) === true;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isAllowedHttp(hostname, allowed)))
    return 'the issuer must be an https URL';
  if (url.search !== '' || url.hash !== '') return 'the issuer has no query or fragment';
  if (operatorAllowed) return undefined;
  let addresses: { address: string; family: number }[];
  try {
    addresses = await lookup(hostname, { all: true });
  } catch {
    return `the issuer's host ${hostname} does not resolve`;
  }
  for (const { address, family } of addresses) {
    const refusal = policy.refusal(hostname, address, family === 6 ? 6 : 4);
    if (refusal !== undefined) return `the issuer's address is not allowed: ${refusal}`;
  }
  return undefined;
}

function isAllowedHttp(hostname: string, allowed: AllowedHosts | undefined): boolean {
  if (allowed === undefined) return false;
  if (allowed.hosts.has(hostname.toLowerCase())) return true;
  const family = hostname.includes(':') ? 'ipv6' : 'ipv4';
  return /^[\d.]+$|:/.test(hostname) && allowed.networks.check(hostname, family);
}

const discovered = new Map<string, { at: number; configuration: client.Configuration }>();

/**
 * The issuer's configuration for the client (discovery at `<issuer>/.well-known/openid-configuration`),
 * reused for 10 minutes per `cacheKey` (the connection id and its last change). Every request to
 * the issuer (discovery, its keys, the token endpoint) goes through `fetchSafely`, a fetch under
 * the destination policy (`createPolicyFetch`): `issuerRefusal` explains a bad issuer when it is
 * saved or used, and the policy fetch holds on the address actually connected to, so a name that
 * later resolves to a private address (DNS rebinding) is still refused.
 *
 * @throws ApiError 400 when discovery fails (the message says why)
 */
export async function oidcConfiguration(
  settings: OidcSettings,
  cacheKey: string,
  fetchSafely: client.CustomFetch,
  now = Date.now(),
): Promise<client.Configuration> {
  const cached = discovered.get(cacheKey);
  if (cached !== undefined && now - cached.at < DISCOVERY_TTL_MS) return cached.configuration;
  let configuration: client.Configuration;
  try {
    configuration = await client.discovery(
      new URL(settings.issuer),
      settings.clientId,
      settings.clientSecret,
      client.ClientSecretBasic(settings.clientSecret),
      {
        timeout: DISCOVERY_TIMEOUT_S,
        [client.customFetch]: fetchSafely,
        // The ID token's signature is checked against the issuer's published keys even though it
        // came straight from the token endpoint (openid-client skips that by default).
        execute: [
          client.enableNonRepudiationChecks,
          ...(settings.issuer.startsWith('http:') ? [client.allowInsecureRequests] : []),
        ],
      },
    );
  } catch (error) {
    throw invalid(`The OpenID issuer ${settings.issuer} could not be discovered: ${explain(error)}`);
  }
  if (discovered.size > 500) discovered.clear();
  discovered.set(cacheKey, { at: now, configuration });
  return configuration;
}

/** An error's message, with its cause's (openid-client wraps a failed request: "something went wrong"). */
function explain(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { cause } = error;
  return cause instanceof Error && cause.message !== error.message
    ? `${error.message}: ${cause.message}`
    : error.message;
}

/** A browser's flow secret: 256 random bits, in the flow cookie only. */
export function newBrowserSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The PKCE verifier of a flow, derived from the browser's secret (never stored). */
function pkceVerifier(browserSecret: string): string {
  return createHash('sha256').update(`pkce:${browserSecret}`, 'utf8').digest('base64url');
}

/** The authorization request's URL, with a fresh state and nonce (to store with the flow). */
export async function authorizationRequest(
  configuration: client.Configuration,
  redirectUri: string,
  browserSecret: string,
): Promise<{ url: string; state: string; nonce: string }> {
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    response_type: 'code',
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(pkceVerifier(browserSecret)),
    code_challenge_method: 'S256',
  });
  return { url: url.href, state, nonce };
}

/** Who the ID token says signed in. */
export interface OidcIdentity {
  subject: string;
  email?: string | undefined;
  emailVerified?: boolean | undefined;
  name?: string | undefined;
}

/**
 * Redeems the code of the callback URL and validates everything: the state, the ID token
 * (signature with the issuer's published keys, `iss`, `aud`, `exp`, `iat`, `nonce`) and PKCE.
 *
 * @throws openid-client's errors on any mismatch (the caller refuses the sign-in)
 */
export async function redeemCallback(
  configuration: client.Configuration,
  callbackUrl: URL,
  flow: { state: string; nonce: string; browserSecret: string },
): Promise<OidcIdentity> {
  const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
    pkceCodeVerifier: pkceVerifier(flow.browserSecret),
    expectedState: flow.state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (claims === undefined) throw new Error('no ID token');
  return {
    subject: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    emailVerified: typeof claims.email_verified === 'boolean' ? claims.email_verified : undefined,
    name: typeof claims.name === 'string' ? claims.name : undefined,
  };
}
