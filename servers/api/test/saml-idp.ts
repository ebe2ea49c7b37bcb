import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import { parseXml } from '../src/modules/sso/saml/xml.ts';

// A SAML 2.0 identity provider run in the test process: samlify's IdentityProvider signs the
// responses (RSA-SHA256, exclusive c14n). The verification under test is the server's
// (src/modules/sso/saml); samlify's own schema validation of what it parses is skipped here.

// samlify is loaded without its type declarations (they pull the DOM library into the program:
// see src/modules/sso/saml/xml.ts); the members used are typed here.
interface SamlifyIdentityProvider {
  getMetadata(): string;
  createLoginResponse(
    sp: unknown,
    requestInfo: object,
    binding: 'post',
    user: object,
    customTagReplacement: (template: string) => { id: string; context: string },
  ): Promise<{ context: string }>;
}
interface Samlify {
  setSchemaValidator(validator: { validate(xml: string): Promise<string> }): void;
  IdentityProvider(settings: Record<string, unknown>): SamlifyIdentityProvider;
  ServiceProvider(settings: Record<string, unknown>): unknown;
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, string | undefined>): string };
}
const samlify = createRequire(import.meta.url)('samlify') as Samlify;

samlify.setSchemaValidator({ validate: async () => 'skipped' });

/** A key and its self-signed certificate (PEM), fixed for tests (CN=test-saml-idp, 100 years). */
export interface TestKeyPair {
  privateKey: string;
  certificate: string;
}

export const IDP_KEY_PAIR: TestKeyPair = {
  privateKey: `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCJ2IZ+xEhj1BQ0
kRtIjHsP9mGCY63enP3p8BOCS3J8ps5CIDXYtu9bVGHS0T5TYA/4424pdO/UmWB9
lk0O0qiHkTlZk5jAcuTAJvlEskunZQOGCWpLq76wGv2n+FchXXnDhstxTVlGHBU6
YBZdOPpxVeftBj4xNqrIJMQF/Hv1JWBhPMIW3WV9mIn1YTNmN+Wj3HZuA86vIko+
3ISvEzs5R8XDIqekLcXfqw3l19/jQqY7NwOa/aIaFzfVFAIqP7sH2DOvfIbzeaBf
wOwRnIcHkunvovIRT1yzCg0kD7AyHssHn0DtYZUUftkaybSSD3+9K7I1QXKzVP5W
fsqsX8eHAgMBAAECggEAD/yBCJWZ8Z3oY/pKKD1GjmDcCSOnR/B8EBPsJ0m5stQj
io6yv/njQ3vDRpBGwqOa5pn1rjAmGklZY+c485WhvussNAPGjNcmSVSbxwhIdtbj
tDlGTxVRbZoLvd2yuSdeljr9QBwg1N0v5w+6uEAB53/3gEkfkFSPNNvyseEIvTLX
ZuUaUrhqQmHl6rMv6KXpHe/8lV2+rxvs8/20VtHpvmCH2TxKzaziXWmXr7gXqtxc
qkD4MiebzCEcxJmSTGEf5EI5kBLnUb1L8ZMMAZ8tPRRrKpvzWbJ7ktrWvVgogbbO
BsIWUJuTZUMefQJlYR6XJHj3gQCkCQIZJ3Y4+uPMAQKBgQDAytW2dSPT7sTURjHk
J8vQ2SKCahGKBplxt4m3aD+JH3yb7ip3ccX5YtD4CikbmqiAbarCW7/TYoPfcyzf
P/oRtU7JKq+5tjOIGRr7YR2FvCz58ziWNxO6uwNXkg2WPQwakA/U/42C3osC9/pq
SLR35b8M9TDLDCGAaUPsOEnEAQKBgQC3Cf+8RB1V2LhQ8CuzsGh8M2PCoC+ileNL
9akM4mD0sncAV/Q6tO8H15wF4eM68mRfnTn9AM01z0YdquWstbbF9L7O3Tu0Cle8
70tVOXmAtHJxJ8+OxlDPPjBR922aPU9127W3L1OkPpdnllwVrLw+sMVHzPO0NiSd
pzFBNI1rhwKBgA3t2bkAB6GlS6VGmQ4x7eDd/0dK4I+HYIi9yP5uUsDWfItLjtfo
aXRWNmDlYwjyiKAWzFKUjGx6XqrDSIesuKWU4udX5TBWwKxhm/hzkM17xggdEYaQ
3iUMo/YswDyNlpVIuUwbVp8Q8xw4zGfnbtqGx+HoySiybK05bcXgXzwBAoGAAcsF
SFDagLbIx3Iy22XFAEJ4nbV4Af255kqXx1qIXJ1K8SPrbo/LL6Z7DsuxsCgjt5QQ
t1vEptxK8Yt1CIYXLkVBgUFFjnPzfBRUBpeziwE5hcZAEEP9EqqnSoZD+pjTKHJo
i0zZYuiCDy+34zZ3+Z09sYBeest0/F5g6ySapg0CgYEAmclQOdz4akpcNiBIi/6k
h23sj60pPvtgvzpJLjrxcy0PVuYZ4ghBzMMhQBAyZMI9j6gzKitRA9Uc7BwngoGT
sB8Apa5tiMzVI7AzkbuRrzr6I/1DRyRHhH/G6RU5OXIX5Zh1G4wuTje3a3oPZsgw
On7M3/Y5mnj86rMNZHY4cA4=
-----END PRIVATE KEY-----
`,
  certificate: `-----BEGIN CERTIFICATE-----
MIIDEzCCAfugAwIBAgIUfFQLGQj4Qp+HplPeS4WuuNFf58gwDQYJKoZIhvcNAQEL
BQAwGDEWMBQGA1UEAwwNdGVzdC1zYW1sLWlkcDAgFw0yNjExMjkxMTA4MzNaGA8y
MTI2MTEwNTExMDgzM1owGDEWMBQGA1UEAwwNdGVzdC1zYW1sLWlkcDCCASIwDQYJ
KoZIhvcNAQEBBQADggEPADCCAQoCggEBAInYhn7ESGPUFDSRG0iMew/2YYJjrd6c
/enwE4JLcnymzkIgNdi271tUYdLRPlNgD/jjbil079SZYH2WTQ7SqIeROVmTmMBy
5MAm+USyS6dlA4YJakurvrAa/af4VyFdecOGy3FNWUYcFTpgFl04+nFV5+0GPjE2
qsgkxAX8e/UlYGE8whbdZX2YifVhM2Y35aPcdm4Dzq8iSj7chK8TOzlHxcMip6Qt
xd+rDeXX3+NCpjs3A5r9ohoXN9UUAio/uwfYM698hvN5oF/A7BGchweS6e+i8hFP
XLMKDSQPsDIeywefQO1hlRR+2RrJtJIPf70rsjVBcrNU/lZ+yqxfx4cCAwEAAaNT
MFEwHQYDVR0OBBYEFEBsZlaMcI2z+/AYq8YHshGzCMilMB8GA1UdIwQYMBaAFEBs
ZlaMcI2z+/AYq8YHshGzCMilMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQEL
BQADggEBAD6+e05KfK+fcKv4Y8PVyqexCAOE0ITG6uUXXcXIi38WZHGnjJVIFRal
hW3OFAB4xiyxjliIdkcc1pPKP0XmrrQ4GTowA/jn69WCf/0UOqrXQOJ2S2JUpLCk
TUvN7PDFMHW5pcP/aXBbwklU6SsSIdWa1fs/Cq1FIyDzTrljkN5aB7RTuLabsU8a
7iBTupgS7oVoEBh7oJjaWX/hW2KrEVVsFBQBcJwodATb0xfhAIwdXkrmdgN8J8pZ
wdoaB43SPmnGRibRCi1/FpaCftxaKcpOPzGu3c7yKCYgCgh5O3kO7onmlCbuU3Ok
StVu7vnC/3W9YWbgRKZqSbN+mavLc2s=
-----END CERTIFICATE-----
`,
};

/** Another pair (CN=test-saml-other): a response signed with it must be refused. */
export const OTHER_KEY_PAIR: TestKeyPair = {
  privateKey: `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDPFce6mVKXikz+
Jb5tAHR1AtHrCs9zbQlFT8Q5qNIQmaCtDxJBZdYDE+lfAiBXK+qpyWe3hG72n/L1
A8BWWxtCxRhSQjczXhKw4QM6D2okj1gzU/+crBPa/lbOxhl/eBCx+cAkKsnnssme
jPPcKMftW3gK7h84UUqO6RPoh65ULwu3QAvhLk6HnP7zbJvgOBlcUO7Mi1KPQq4J
JmsGq2fm7W+/Lw6a8yHJOEftCChep3a78Ov9BVcb4Wj/a9FBJjwaxnhVtF90/dH+
Fzv9EkEbPzJc7Um9SX4tZbo6buyFDL6ItHBd5B5LG71d9AB+g4jW9ks39FGXry2X
2G4dBVNbAgMBAAECggEACdqv+UIh+UlSq5vRMJM7zMnb9CgueuOz5dhn0hSXVm84
LheXc74BqijUPQ9TkMJdZ0O6qCV3AEyfbyd2thqdpqTpYcLr4d7TFBeQI7DD+v8P
53Vg++T/QYzRKTyNBxEWTIR6y7Mg436DAmhpBTMIQ5tLuugWsMqKZMn/IyOdvJIL
RCGa1N1S2jQNkY/iEGC014SwwF1oN0tAvx9YfosX59ivBRl+0HLArF1HuzB+PwNL
rElPpNRnapfyt3ljmVBBJZVzpiz0odBOdt6yr2mP+y52vTqZS6sIhgBpgXaDbKUr
esM4HfBYEBq/U9hYh2gppJGfdYFxTHQNv37dmTKceQKBgQDzATi/Vyd+v1ikWq4C
xT1l6FYTbuhbx47e/PaH9e2CjUWtDFsgWxZZ+uncuYjnFVCI/EpUdkWrXr9SGQJ2
gjNvmJs5onD326sP9dbCNZCfLv4u8nJbbGrNQmhCpXyC1agUVh4IxwsPlgG4UsUc
pNqOwsR+RfhWtuKS8zaaqeRRCQKBgQDaKM/CsFlQne5fN09sLWibkLZqICmfVw2W
M/EhX+Yv3RDnOP1yYjFEKMoGqzsrIHhXaDzWKoKPH02Wue3zxdxDsxgj8DNKS1TJ
jTUGRKSCpUelay6frA5feY35FxYjsAv3wzETvebvSSPKB1Q8laz1Z1dj02fRg6/x
hkJp+bCuQwKBgGK3KVVZU1sC4kCJ8cyAUavXUTg9wrid/aUKQCAFQIHbX+WnclFX
j2HoMx6OZFXza67qRku/bBfsum3gaQa5Z6m65bvpCFk37GrkZGSqm+B+l5V8ugX3
qf9OLcp9LXJ81vXD8hmAujaPqo01WouDUKHT7zyYsgSP8MTfdlwoDe75AoGBALPB
TO8uP2mdt/vcpySLhdYotyVauvD/2cIZqmXFjvWBQZxD6RGGtvFiapR0Ipy2dHIR
AY+2Fz22nUfEi7yBG6zstMdn89sTlxk7sKUpiiPb69zxI8mNC4q/ravAyg090Z6k
xpttrgscSND+mPoSmiDatbcbSj/oMeDgr3iCtIHhAoGBAMRq+fkF+dOu/c8mwrDM
MEZqynuTB5NK+YpBdfUczj/VasFS9/ZWBITbuQwKExceqNRCD2rN1gXMd8efg/jz
zCVwTJlvYc4cl6A8zp4ooKBz4Ka09KDxcaKWtqr/h5IWcDXXCwVud70mIdud4/MZ
NNjr7XYlikYXY7aP2+tIE9cp
-----END PRIVATE KEY-----
`,
  certificate: `-----BEGIN CERTIFICATE-----
MIIDFzCCAf+gAwIBAgIUCm99jNV5eDkco1GpaDUR0mijIzAwDQYJKoZIhvcNAQEL
BQAwGjEYMBYGA1UEAwwPdGVzdC1zYW1sLW90aGVyMCAXDTI2MTEyOTExMDgzM1oY
DzIxMjYxMTA1MTEwODMzWjAaMRgwFgYDVQQDDA90ZXN0LXNhbWwtb3RoZXIwggEi
MA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQDPFce6mVKXikz+Jb5tAHR1AtHr
Cs9zbQlFT8Q5qNIQmaCtDxJBZdYDE+lfAiBXK+qpyWe3hG72n/L1A8BWWxtCxRhS
QjczXhKw4QM6D2okj1gzU/+crBPa/lbOxhl/eBCx+cAkKsnnssmejPPcKMftW3gK
7h84UUqO6RPoh65ULwu3QAvhLk6HnP7zbJvgOBlcUO7Mi1KPQq4JJmsGq2fm7W+/
Lw6a8yHJOEftCChep3a78Ov9BVcb4Wj/a9FBJjwaxnhVtF90/dH+Fzv9EkEbPzJc
7Um9SX4tZbo6buyFDL6ItHBd5B5LG71d9AB+g4jW9ks39FGXry2X2G4dBVNbAgMB
AAGjUzBRMB0GA1UdDgQWBBTznMKU+/aXxvIfoEzGc2jSqMkUdzAfBgNVHSMEGDAW
gBTznMKU+/aXxvIfoEzGc2jSqMkUdzAPBgNVHRMBAf8EBTADAQH/MA0GCSqGSIb3
DQEBCwUAA4IBAQBzc/C1kYdyOtxO6A/SnaUnfxfDqtQzWGiFAWjMyHTIslyTjjBj
E5F4GHQhqL72RrydhUQjhMJYgQMGVkBR0vN0I4svzwaobWgcS/rWuTPvnBJkUIIj
fpRvoh2X6b744dxzkskjB9n0Rt/U1SsEMv1BFprIxFKfUG65izLI4g0QpvsD/9OW
Q0R1GBRMmd0ooiXx4IFvTV73pkJoP0dRHu9SWvPhoF2vh9MZSDwP0jDarMqdqu97
cQrWoZvZf/eoZF1gKuwcde7Vd7R98t5GkS0pGl8EYQSY+ISOrhGk/n6AXzdWvejW
8fYifFbqI95ZtVMCGPqQWu9FJScU+oa2Vqqg
-----END CERTIFICATE-----
`,
};

const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** What the SP side of a response needs: this server's entity id and ACS URL for a connection. */
export interface TestServiceProvider {
  entityId: string;
  acsUrl: string;
}

export interface LoginResponseOptions {
  sp: TestServiceProvider;
  /** The AuthnRequest's ID (see {@link authnRequestOf}); null for an unsolicited response. */
  requestId: string | null;
  nameId: string;
  email?: string;
  name?: string;
  /** Default `sp.entityId`. */
  audience?: string;
  /** SubjectConfirmationData Recipient, default `sp.acsUrl`. */
  recipient?: string;
  /** The response's Destination, default `sp.acsUrl`; null leaves it out. */
  destination?: string | null;
  /** Default the IdP's entity id. */
  issuer?: string;
  /** Default now - 5 s. */
  notBefore?: Date;
  /** Conditions and SubjectConfirmationData NotOnOrAfter, default now + 5 min. */
  notOnOrAfter?: Date;
  assertionId?: string;
  /** What is signed: the assertion (default), the response, both. */
  sign?: 'assertion' | 'response' | 'both';
  /** The key that signs, default the IdP's. */
  keyPair?: TestKeyPair;
}

export interface TestIdentityProvider {
  entityId: string;
  ssoUrl: string;
  /** The signing certificate (PEM). */
  certificate: string;
  /** The IdP's metadata XML (entity id, HTTP-Redirect SSO URL, signing certificate). */
  metadata(): string;
  /** A base64 SAMLResponse for the POST binding. */
  loginResponse(options: LoginResponseOptions): Promise<string>;
}

const AUTHN_STATEMENT =
  '<saml:AuthnStatement AuthnInstant="{IssueInstant}" SessionIndex="{SessionIndex}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>';

function attributeStatement(attributes: Record<string, string>): string {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return '';
  const body = entries
    .map(
      ([name]) =>
        `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">{Attribute_${name}}</saml:AttributeValue></saml:Attribute>`,
    )
    .join('');
  return `<saml:AttributeStatement>${body}</saml:AttributeStatement>`;
}

function samlId(): string {
  return `_${randomBytes(16).toString('hex')}`;
}

/**
 * An IdP with `entityId` and `ssoUrl` (nothing listens there: a test reads the AuthnRequest from
 * the redirect URL with {@link authnRequestOf} and answers with `loginResponse`).
 */
export function createTestIdp(
  options: { entityId?: string; ssoUrl?: string; keyPair?: TestKeyPair } = {},
): TestIdentityProvider {
  const entityId = options.entityId ?? 'https://idp.test/saml/metadata';
  const ssoUrl = options.ssoUrl ?? 'https://idp.test/saml/sso';
  const keyPair = options.keyPair ?? IDP_KEY_PAIR;
  const metadataIdp = samlify.IdentityProvider({
    entityID: entityId,
    signingCert: keyPair.certificate,
    privateKey: keyPair.privateKey,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
    singleLogoutService: [{ Binding: REDIRECT, Location: `${ssoUrl}/logout` }],
  });
  return {
    entityId,
    ssoUrl,
    certificate: keyPair.certificate,
    metadata: () => metadataIdp.getMetadata(),
    async loginResponse(response) {
      const sign = response.sign ?? 'assertion';
      const signer = response.keyPair ?? keyPair;
      const idp = samlify.IdentityProvider({
        entityID: entityId,
        signingCert: signer.certificate,
        privateKey: signer.privateKey,
        nameIDFormat: [EMAIL_FORMAT],
        singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
        singleLogoutService: [{ Binding: REDIRECT, Location: `${ssoUrl}/logout` }],
      });
      const sp = samlify.ServiceProvider({
        entityID: response.sp.entityId,
        assertionConsumerService: [{ Binding: POST, Location: response.sp.acsUrl }],
        wantAssertionsSigned: sign !== 'response',
        wantMessageSigned: sign !== 'assertion',
      });
      const now = new Date();
      const notOnOrAfter = (response.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)).toISOString();
      const attributes: Record<string, string> = {};
      if (response.email !== undefined) attributes.email = response.email;
      if (response.name !== undefined) attributes.displayName = response.name;
      const { context } = await idp.createLoginResponse(sp, {}, 'post', {}, (template) => {
        const filled = template
          .replace('{AuthnStatement}', AUTHN_STATEMENT)
          .replace('{AttributeStatement}', attributeStatement(attributes));
        const values: Record<string, string | undefined> = {
          ID: samlId(),
          AssertionID: response.assertionId ?? samlId(),
          Destination:
            response.destination === null ? undefined : (response.destination ?? response.sp.acsUrl),
          Audience: response.audience ?? response.sp.entityId,
          SubjectRecipient: response.recipient ?? response.sp.acsUrl,
          Issuer: response.issuer ?? entityId,
          IssueInstant: now.toISOString(),
          StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
          ConditionsNotBefore: (response.notBefore ?? new Date(now.getTime() - 5000)).toISOString(),
          ConditionsNotOnOrAfter: notOnOrAfter,
          SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
          NameIDFormat: EMAIL_FORMAT,
          NameID: response.nameId,
          InResponseTo: response.requestId ?? undefined,
          SessionIndex: samlId(),
          ...Object.fromEntries(
            Object.entries(attributes).map(([name, value]) => [`Attribute_${name}`, value]),
          ),
        };
        return { id: values.ID ?? '', context: samlify.SamlLib.replaceTagsByValue(filled, values) };
      });
      return context;
    },
  };
}

/** The AuthnRequest a redirect URL (HTTP-Redirect binding) carries: its ID, issuer and ACS URL. */
export function authnRequestOf(redirectUrl: string): {
  id: string;
  issuer: string;
  acsUrl: string | null;
  destination: string | null;
} {
  const encoded = new URL(redirectUrl).searchParams.get('SAMLRequest');
  if (!encoded) throw new Error(`no SAMLRequest in ${redirectUrl}`);
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
  const request = parseXml(xml, (message) => new Error(message)).documentElement;
  if (request.localName !== 'AuthnRequest') throw new Error(`not an AuthnRequest: ${xml}`);
  const issuer = request.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0];
  return {
    id: request.getAttribute('ID') ?? '',
    issuer: issuer?.textContent ?? '',
    acsUrl: request.getAttribute('AssertionConsumerServiceURL'),
    destination: request.getAttribute('Destination'),
  };
}
