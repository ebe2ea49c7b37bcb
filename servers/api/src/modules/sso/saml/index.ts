import { randomBytes, X509Certificate } from 'node:crypto';
import { generateServiceProviderMetadata, SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import type { Kysely } from 'kysely';
import type { Database } from '../../../platform/database/schema.ts';
import { invalid } from '../../../platform/http/errors.ts';
import { parseXml, select, type XmlNode } from './xml.ts';

// SAML 2.0 for organization SSO (issue 26; servers/api/README.md, SAML). node-saml verifies the
// XML signature (xml-crypto, one assertion only, the reference pointing at its own parent: the
// guards against signature wrapping) and the audience; everything else is read from the XML that
// signature covered and checked here, with the clock given (`now`), so the checks are testable
// and node-saml's own clock is not used (its time checks are off: `acceptedClockSkewMs: -1`).

/** A connection's identity provider (from its metadata, or entered by an admin). */
export interface SamlIdentityProvider {
  entityId: string;
  /** The single sign-on URL of the HTTP-Redirect binding. */
  ssoUrl: string;
  /** PEM certificates; a response signed by any of them is accepted (several while rotating). */
  certificates: string[];
}

/** This server as a connection's service provider. */
export interface SamlServiceProvider {
  entityId: string;
  acsUrl: string;
}

/** What a verified assertion says about the person. */
export interface SamlAssertion {
  /** The subject's NameID, its full text. */
  nameId: string;
  /** The e-mail attribute, else the NameID when it is an e-mail address. */
  email?: string;
  name?: string;
  assertionId: string;
  sessionIndex?: string;
}

export type SamlRefusalReason =
  | 'malformed'
  | 'signature'
  | 'issuer'
  | 'audience'
  | 'recipient'
  | 'destination'
  | 'time'
  | 'in_response_to'
  | 'replay';

const refusalMarker = Symbol.for('@svc/api.SamlRefusal');

/** Why a SAML response was refused; the message is for the audit log, not for the person. */
export class SamlRefusal extends Error {
  readonly [refusalMarker] = true;
  readonly reason: SamlRefusalReason;

  constructor(reason: SamlRefusalReason, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SamlRefusal';
    this.reason = reason;
  }

  static isInstance(value: unknown): value is SamlRefusal {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [refusalMarker]?: unknown })[refusalMarker] === true
    );
  }
}

/** How long a response to an AuthnRequest is accepted. */
const SAML_REQUEST_LIFETIME_MS = 10 * 60 * 1000;
/** The clock skew allowed on NotBefore and NotOnOrAfter. */
const SAML_CLOCK_SKEW_MS = 60 * 1000;

const METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];
const NAME_ATTRIBUTES = [
  'name',
  'displayname',
  'urn:oid:2.16.840.1.113730.3.1.241',
  'http://schemas.microsoft.com/identity/claims/displayname',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
];

function first(expression: string, node: XmlNode): XmlNode | undefined {
  return select(expression, node)[0];
}

function attribute(node: XmlNode | undefined, name: string): string | undefined {
  if (!node?.hasAttribute?.(name)) return undefined;
  return node.getAttribute?.(name) ?? undefined;
}

function el(name: string): string {
  return `*[local-name()='${name}']`;
}

function toPem(base64: string): string {
  const body = base64.replace(/\s+/g, '');
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** `pemOrBase64` as a PEM certificate; throws `invalid` when it is not one X.509 certificate. */
export function normalizeCertificate(pemOrBase64: string): string {
  const trimmed = pemOrBase64.trim();
  const body = trimmed.startsWith('-----BEGIN CERTIFICATE-----')
    ? trimmed.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
    : trimmed;
  const pem = toPem(body);
  try {
    new X509Certificate(pem);
  } catch {
    throw invalid('The IdP certificate is not a valid X.509 certificate (PEM or base64 DER)');
  }
  return pem;
}

/**
 * The entity id, HTTP-Redirect single sign-on URL and signing certificates of the IdP described
 * by `xml` (an `EntityDescriptor`, or the first one with an IdP role in an `EntitiesDescriptor`).
 * Throws `invalid` (400) when the XML is not IdP metadata this server can use.
 */
export function parseIdpMetadata(xml: string): SamlIdentityProvider {
  if (xml.length > 1_000_000) throw invalid('The IdP metadata is larger than 1 MB');
  const document = parseXml(xml, (message) => invalid(`The IdP metadata is not well-formed XML: ${message}`));
  const descriptor = select(`//${el('EntityDescriptor')}[${el('IDPSSODescriptor')}]`, document).find(
    (node) => node.namespaceURI === METADATA_NS,
  );
  if (!descriptor) throw invalid('The IdP metadata has no EntityDescriptor with an IDPSSODescriptor');
  const entityId = attribute(descriptor, 'entityID')?.trim();
  if (!entityId) throw invalid('The IdP metadata has no entityID');
  const idpRole = first(el('IDPSSODescriptor'), descriptor) as XmlNode;
  const ssoUrl = select(el('SingleSignOnService'), idpRole)
    .filter((node) => attribute(node, 'Binding') === REDIRECT_BINDING)
    .map((node) => attribute(node, 'Location')?.trim())
    .find((location) => location);
  if (!ssoUrl) throw invalid('The IdP metadata has no SingleSignOnService with the HTTP-Redirect binding');
  if (!/^https?:\/\//i.test(ssoUrl) || !URL.canParse(ssoUrl)) {
    throw invalid('The IdP single sign-on URL is not an http(s) URL');
  }
  const certificates = select(el('KeyDescriptor'), idpRole)
    .filter((node) => {
      const use = attribute(node, 'use');
      return use === undefined || use === 'signing';
    })
    .flatMap((node) => select(`.//${el('X509Certificate')}`, node))
    .map((node) => normalizeCertificate(node.textContent ?? ''));
  if (certificates.length === 0) throw invalid('The IdP metadata has no signing certificate');
  return { entityId, ssoUrl, certificates: [...new Set(certificates)] };
}

/** This server's entity id and ACS URL for a connection. */
export function samlServiceProvider(publicUrl: string, connectionId: string): SamlServiceProvider {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    entityId: `${base}/auth/sso/${connectionId}/metadata`,
    acsUrl: `${base}/auth/sso/${connectionId}/acs`,
  };
}

/** The SP metadata XML an IdP admin imports (assertions wanted signed, the POST binding ACS). */
export function serviceProviderMetadata(sp: SamlServiceProvider): string {
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    identifierFormat: EMAIL_FORMAT,
    wantAssertionsSigned: true,
  });
}

function samlClient(idp: SamlIdentityProvider, sp: SamlServiceProvider, requestId?: string): SAML {
  return new SAML({
    idpCert: idp.certificates,
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    entryPoint: idp.ssoUrl,
    audience: sp.entityId,
    identifierFormat: EMAIL_FORMAT,
    disableRequestedAuthnContext: true,
    // Either the response or the assertion must be signed (node-saml refuses neither being signed).
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    // Time and InResponseTo are checked below, against `now` and the saml_requests table.
    acceptedClockSkewMs: -1,
    validateInResponseTo: ValidateInResponseTo.never,
    cacheProvider: {
      saveAsync: async () => null,
      getAsync: async () => null,
      removeAsync: async () => null,
    },
    generateUniqueId: () => requestId ?? `_${randomBytes(20).toString('hex')}`,
  });
}

/**
 * The IdP URL (HTTP-Redirect binding) carrying a new AuthnRequest for the connection; the
 * request's id is recorded so that only a response to it is accepted, once, for ten minutes.
 */
export async function startSamlSignIn(
  database: Kysely<Database>,
  connectionId: string,
  idp: SamlIdentityProvider,
  sp: SamlServiceProvider,
  now: Date,
): Promise<{ redirectUrl: string }> {
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const redirectUrl = await samlClient(idp, sp, requestId).getAuthorizeUrlAsync('', undefined, {});
  await database.deleteFrom('saml_requests').where('expires_at', '<', now).execute();
  await database
    .insertInto('saml_requests')
    .values({
      id: requestId,
      connection_id: connectionId,
      expires_at: new Date(now.getTime() + SAML_REQUEST_LIFETIME_MS),
    })
    .execute();
  return { redirectUrl };
}

function refusalOf(error: unknown): SamlRefusal {
  const message = error instanceof Error ? error.message : String(error);
  if (/audience/i.test(message)) return new SamlRefusal('audience', message, error);
  if (/signature|signed/i.test(message)) return new SamlRefusal('signature', message, error);
  return new SamlRefusal('malformed', message, error);
}

function instant(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(time)) {
    throw new SamlRefusal('malformed', `${name} is not a date-time: ${value}`);
  }
  return time;
}

function checkWindow(node: XmlNode, what: string, nowMs: number): number | undefined {
  const notBefore = instant(attribute(node, 'NotBefore'), `${what} NotBefore`);
  const notOnOrAfter = instant(attribute(node, 'NotOnOrAfter'), `${what} NotOnOrAfter`);
  if (notBefore !== undefined && nowMs + SAML_CLOCK_SKEW_MS < notBefore) {
    throw new SamlRefusal('time', `${what} is not valid before ${new Date(notBefore).toISOString()}`);
  }
  if (notOnOrAfter !== undefined && nowMs - SAML_CLOCK_SKEW_MS >= notOnOrAfter) {
    throw new SamlRefusal('time', `${what} expired at ${new Date(notOnOrAfter).toISOString()}`);
  }
  return notOnOrAfter;
}

function attributeValue(assertion: XmlNode, names: string[]): string | undefined {
  for (const node of select(`${el('AttributeStatement')}/${el('Attribute')}`, assertion)) {
    const name = (attribute(node, 'Name') ?? '').toLowerCase();
    const friendly = (attribute(node, 'FriendlyName') ?? '').toLowerCase();
    if (!names.includes(name) && !names.includes(friendly)) continue;
    const value = select(el('AttributeValue'), node)
      .map((value) => value.textContent?.trim() ?? '')
      .find((text) => text !== '');
    if (value) return value;
  }
  return undefined;
}

/**
 * Verifies the base64 `SAMLResponse` of the POST binding for the connection, and answers what
 * the assertion says. Refuses (throws {@link SamlRefusal}) a response that is not signed, or
 * signed but not with one of `idp.certificates`, or whose signed assertion is not from
 * `idp.entityId`, for `sp.entityId`, to `sp.acsUrl`, valid at `now` (60 s skew), in response to
 * a request this server made for this connection in the last ten minutes (consumed), or whose
 * assertion id this connection already accepted.
 */
export async function verifySamlResponse(
  database: Kysely<Database>,
  connectionId: string,
  idp: SamlIdentityProvider,
  sp: SamlServiceProvider,
  samlResponse: string,
  now: Date,
): Promise<SamlAssertion> {
  if (samlResponse.length > 2_000_000 || !/^[A-Za-z0-9+/=\s]+$/.test(samlResponse)) {
    throw new SamlRefusal('malformed', 'The SAMLResponse is not base64');
  }
  const responseXml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const response = parseXml(
    responseXml,
    (message) => new SamlRefusal('malformed', `The SAMLResponse is not well-formed XML: ${message}`),
  ).documentElement;
  if (response.localName !== 'Response' || response.namespaceURI !== 'urn:oasis:names:tc:SAML:2.0:protocol') {
    throw new SamlRefusal('malformed', 'The SAMLResponse is not a samlp:Response');
  }

  const status = attribute(first(`${el('Status')}/${el('StatusCode')}`, response), 'Value');
  if (status !== 'urn:oasis:names:tc:SAML:2.0:status:Success') {
    const message = first(`${el('Status')}/${el('StatusMessage')}`, response)?.textContent?.trim();
    throw new SamlRefusal(
      'malformed',
      `The IdP answered ${status ?? 'no status'}${message ? `: ${message.slice(0, 200)}` : ''}`,
    );
  }

  let assertionXml: string;
  try {
    const { profile } = await samlClient(idp, sp).validatePostResponseAsync({ SAMLResponse: samlResponse });
    const xml = profile?.getAssertionXml?.();
    if (!xml) throw new SamlRefusal('malformed', 'The response carries no assertion');
    assertionXml = xml;
  } catch (error) {
    throw SamlRefusal.isInstance(error) ? error : refusalOf(error);
  }

  // From here on only the signed assertion (as the signature check canonicalized it: without
  // comments) is read, but for the response's Destination and Issuer, checked when present.
  const assertion = parseXml(
    assertionXml,
    (message) => new SamlRefusal('malformed', message),
  ).documentElement;
  const nowMs = now.getTime();

  const assertionId = attribute(assertion, 'ID');
  if (!assertionId) throw new SamlRefusal('malformed', 'The assertion has no ID');

  const issuer = first(el('Issuer'), assertion)?.textContent?.trim();
  if (issuer !== idp.entityId) {
    throw new SamlRefusal('issuer', `The assertion's issuer is ${issuer ?? 'missing'}, not ${idp.entityId}`);
  }
  const responseIssuer = first(el('Issuer'), response)?.textContent?.trim();
  if (responseIssuer !== undefined && responseIssuer !== idp.entityId) {
    throw new SamlRefusal('issuer', `The response's issuer is ${responseIssuer}, not ${idp.entityId}`);
  }

  const destination = attribute(response, 'Destination');
  if (destination !== undefined && destination !== sp.acsUrl) {
    throw new SamlRefusal('destination', `The response's Destination is ${destination}, not ${sp.acsUrl}`);
  }

  const audiences = select(
    `${el('Conditions')}/${el('AudienceRestriction')}/${el('Audience')}`,
    assertion,
  ).map((node) => node.textContent?.trim());
  if (!audiences.includes(sp.entityId)) {
    throw new SamlRefusal('audience', `The assertion is for ${audiences.join(', ') || 'no audience'}`);
  }

  const confirmations = select(`${el('Subject')}/${el('SubjectConfirmation')}`, assertion).filter(
    (node) => attribute(node, 'Method') === BEARER,
  );
  if (confirmations.length !== 1) {
    throw new SamlRefusal('malformed', 'The assertion has not exactly one bearer SubjectConfirmation');
  }
  const confirmation = first(el('SubjectConfirmationData'), confirmations[0] as XmlNode);
  if (!confirmation)
    throw new SamlRefusal('malformed', 'The SubjectConfirmation has no SubjectConfirmationData');
  const recipient = attribute(confirmation, 'Recipient');
  if (recipient !== sp.acsUrl) {
    throw new SamlRefusal(
      'recipient',
      `The assertion's Recipient is ${recipient ?? 'missing'}, not ${sp.acsUrl}`,
    );
  }

  const confirmationExpiry = checkWindow(confirmation, 'The SubjectConfirmationData', nowMs);
  if (confirmationExpiry === undefined) {
    throw new SamlRefusal('time', 'The SubjectConfirmationData has no NotOnOrAfter');
  }
  const conditions = select(el('Conditions'), assertion);
  if (conditions.length !== 1)
    throw new SamlRefusal('malformed', 'The assertion has not exactly one Conditions');
  const conditionsExpiry = checkWindow(conditions[0] as XmlNode, 'The assertion', nowMs);

  const requestId = attribute(confirmation, 'InResponseTo');
  const responseInResponseTo = attribute(response, 'InResponseTo');
  if (!requestId) {
    throw new SamlRefusal('in_response_to', 'The assertion answers no request of this server (unsolicited)');
  }
  if (responseInResponseTo !== undefined && responseInResponseTo !== requestId) {
    throw new SamlRefusal('in_response_to', 'The response and its assertion answer different requests');
  }

  const subject = first(`${el('Subject')}/${el('NameID')}`, assertion);
  // The whole text of the NameID (every text node), never the first one only: the comment
  // attack relies on a reader that stops at an inserted comment.
  const nameId = subject?.textContent?.trim();
  if (!nameId) throw new SamlRefusal('malformed', 'The assertion has no NameID');
  const nameIdIsEmail = attribute(subject, 'Format') === EMAIL_FORMAT || /^[^@\s]+@[^@\s]+$/.test(nameId);
  const email = attributeValue(assertion, EMAIL_ATTRIBUTES) ?? (nameIdIsEmail ? nameId : undefined);
  const name = attributeValue(assertion, NAME_ATTRIBUTES);
  const sessionIndex = attribute(first(el('AuthnStatement'), assertion), 'SessionIndex');

  // Kept until the assertion can no longer pass the time check anyway.
  const expiresAt = new Date(Math.max(confirmationExpiry, conditionsExpiry ?? 0) + SAML_CLOCK_SKEW_MS);
  await database.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('saml_assertions').where('expires_at', '<', now).execute();
    const recorded = await transaction
      .insertInto('saml_assertions')
      .values({ connection_id: connectionId, assertion_id: assertionId, expires_at: expiresAt })
      .onConflict((conflict) => conflict.doNothing())
      .returning('assertion_id')
      .executeTakeFirst();
    if (!recorded) throw new SamlRefusal('replay', `The assertion ${assertionId} was already used`);
    const request = await transaction
      .deleteFrom('saml_requests')
      .where('id', '=', requestId)
      .where('connection_id', '=', connectionId)
      .where('expires_at', '>', now)
      .returning('id')
      .executeTakeFirst();
    if (!request) {
      throw new SamlRefusal('in_response_to', 'The assertion answers no pending request of this connection');
    }
  });

  return {
    nameId,
    assertionId,
    ...(email === undefined ? {} : { email: email.toLowerCase() }),
    ...(name === undefined ? {} : { name }),
    ...(sessionIndex === undefined ? {} : { sessionIndex }),
  };
}
