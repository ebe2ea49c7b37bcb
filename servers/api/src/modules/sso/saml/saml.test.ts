import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authnRequestOf, createTestIdp, OTHER_KEY_PAIR } from '../../../../test/saml-idp.ts';
import { ENGINES, openTestDatabase, type TestDatabase } from '../../../../test/test-database.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import { createId } from '../../../platform/ids.ts';
import { createOrganization } from '../../orgs/organizations.ts';
import {
  parseIdpMetadata,
  SamlRefusal,
  type SamlRefusalReason,
  samlServiceProvider,
  serviceProviderMetadata,
  startSamlSignIn,
  verifySamlResponse,
} from './index.ts';
import { parseXml, serializeXml, type XmlDocument, type XmlElement } from './xml.ts';

// SAML (issue 26): a samlify IdP in the test process answers the AuthnRequests this server makes;
// a valid login passes, and the known attacks are each refused with their reason.

const PUBLIC_URL = 'https://svc.example';

describe('SAML metadata', () => {
  it('reads the IdP metadata samlify publishes, and refuses what is not IdP metadata', () => {
    const idp = createTestIdp();
    const parsed = parseIdpMetadata(idp.metadata());
    expect(parsed.entityId).toBe(idp.entityId);
    expect(parsed.ssoUrl).toBe(idp.ssoUrl);
    expect(parsed.certificates).toHaveLength(1);
    expect(parsed.certificates[0]?.replace(/\s+/g, '')).toBe(idp.certificate.replace(/\s+/g, ''));
    for (const junk of [
      'not xml',
      '<a><b></a>',
      '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
      idp.metadata().replace(/<(\w+:)?X509Certificate>[^<]+</, '<$1X509Certificate>bm90IGEgY2VydA==<'),
    ]) {
      let error: unknown;
      try {
        parseIdpMetadata(junk);
      } catch (caught) {
        error = caught;
      }
      expect(ApiError.isInstance(error) && error.status === 400, junk).toBe(true);
    }
  });

  it('publishes SP metadata with the entity id and the ACS URL of the connection', () => {
    const sp = samlServiceProvider(`${PUBLIC_URL}/`, 'sso_1');
    expect(sp).toEqual({
      entityId: `${PUBLIC_URL}/auth/sso/sso_1/metadata`,
      acsUrl: `${PUBLIC_URL}/auth/sso/sso_1/acs`,
    });
    const xml = serviceProviderMetadata(sp);
    expect(xml).toContain(`entityID="${sp.entityId}"`);
    expect(xml).toContain(`Location="${sp.acsUrl}"`);
    expect(xml).toContain('WantAssertionsSigned="true"');
  });
});

describe.each(ENGINES)('SAML sign-in on %s', (engine) => {
  let handle: TestDatabase;
  let connectionId: string;
  const idpHarness = createTestIdp();
  const idp = parseIdpMetadata(idpHarness.metadata());
  let sp: ReturnType<typeof samlServiceProvider>;

  beforeAll(async () => {
    handle = await openTestDatabase(engine);
    const organization = await createOrganization(handle.database, 'SAML org');
    connectionId = createId('sso');
    await handle.database
      .insertInto('sso_connections')
      .values({
        id: connectionId,
        organization_id: organization.id,
        type: 'saml',
        name: 'Test IdP',
        saml_idp_entity_id: idp.entityId,
        saml_sso_url: idp.ssoUrl,
        saml_certificates: JSON.stringify(idp.certificates) as unknown as string[],
      })
      .execute();
    sp = samlServiceProvider(PUBLIC_URL, connectionId);
  }, 120_000);

  afterAll(async () => {
    await handle?.dispose();
  });

  /** A fresh AuthnRequest of this server, as the IdP reads it from the redirect. */
  async function request(): Promise<string> {
    const { redirectUrl } = await startSamlSignIn(handle.database, connectionId, idp, sp, new Date());
    expect(redirectUrl.startsWith(`${idp.ssoUrl}?SAMLRequest=`)).toBe(true);
    const authnRequest = authnRequestOf(redirectUrl);
    expect(authnRequest.issuer).toBe(sp.entityId);
    expect(authnRequest.acsUrl).toBe(sp.acsUrl);
    expect(authnRequest.destination).toBe(idp.ssoUrl);
    return authnRequest.id;
  }

  async function refusal(samlResponse: string, now = new Date()): Promise<SamlRefusalReason | 'accepted'> {
    try {
      await verifySamlResponse(handle.database, connectionId, idp, sp, samlResponse, now);
      return 'accepted';
    } catch (error) {
      if (SamlRefusal.isInstance(error)) return error.reason;
      throw error;
    }
  }

  function decode(samlResponse: string) {
    return parseXml(Buffer.from(samlResponse, 'base64').toString('utf8'), (message) => new Error(message));
  }

  function encode(document: XmlDocument): string {
    return Buffer.from(serializeXml(document)).toString('base64');
  }

  const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';

  it('accepts a valid login (assertion signed, response signed, both) and reads the person', async () => {
    for (const sign of ['assertion', 'response', 'both'] as const) {
      const requestId = await request();
      const samlResponse = await idpHarness.loginResponse({
        sp,
        requestId,
        nameId: 'Ada@Corp.example',
        email: 'Ada@Corp.example',
        name: 'Ada Lovelace',
        sign,
      });
      const assertion = await verifySamlResponse(
        handle.database,
        connectionId,
        idp,
        sp,
        samlResponse,
        new Date(),
      );
      expect(assertion).toMatchObject({
        nameId: 'Ada@Corp.example',
        email: 'ada@corp.example',
        name: 'Ada Lovelace',
      });
      expect(assertion.assertionId).toMatch(/^_/);
      expect(assertion.sessionIndex).toMatch(/^_/);
    }
  });

  it('refuses a response no one signed, or signed by another certificate', async () => {
    const unsigned = decode(
      await idpHarness.loginResponse({ sp, requestId: await request(), nameId: 'a@corp.example' }),
    );
    const signature = unsigned.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0];
    signature?.parentNode?.removeChild(signature);
    expect(await refusal(encode(unsigned))).toBe('signature');
    for (const sign of ['assertion', 'response'] as const) {
      const other = await idpHarness.loginResponse({
        sp,
        requestId: await request(),
        nameId: 'a@corp.example',
        sign,
        keyPair: OTHER_KEY_PAIR,
      });
      expect(await refusal(other)).toBe('signature');
    }
  });

  it('refuses a signed assertion whose content was changed', async () => {
    const document = decode(
      await idpHarness.loginResponse({ sp, requestId: await request(), nameId: 'a@corp.example' }),
    );
    const nameId = document.getElementsByTagNameNS(ASSERTION_NS, 'NameID')[0] as XmlElement;
    nameId.textContent = 'admin@corp.example';
    expect(await refusal(encode(document))).toBe('signature');
  });

  it('refuses signature wrapping: a forged assertion next to, around or inside the signed one', async () => {
    const signed = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'eve@corp.example',
    });

    /** The response, its signed assertion, and an unsigned copy of it naming admin with another ID. */
    function parts() {
      const document = decode(signed);
      const response = document.documentElement as XmlElement;
      const original = document.getElementsByTagNameNS(ASSERTION_NS, 'Assertion')[0] as XmlElement;
      const forged = original.cloneNode(true) as XmlElement;
      forged.setAttribute('ID', '_forged');
      const forgedSignature = forged.getElementsByTagNameNS(
        'http://www.w3.org/2000/09/xmldsig#',
        'Signature',
      )[0];
      forgedSignature?.parentNode?.removeChild(forgedSignature);
      (forged.getElementsByTagNameNS(ASSERTION_NS, 'NameID')[0] as XmlElement).textContent =
        'admin@corp.example';
      return { document, response, original, forged };
    }

    // XSW 1: the forged assertion before the signed one.
    {
      const { document, response, original, forged } = parts();
      response.insertBefore(forged, original);
      expect(await refusal(encode(document))).toBe('signature');
    }
    // XSW 2: the forged assertion after the signed one.
    {
      const { document, response, forged } = parts();
      response.appendChild(forged);
      expect(await refusal(encode(document))).toBe('signature');
    }
    // XSW 3: the signed assertion moved into the forged one, which takes its place.
    {
      const { document, response, original, forged } = parts();
      response.replaceChild(forged, original);
      forged.appendChild(original);
      expect(await refusal(encode(document))).toBe('signature');
    }
    // XSW 4: the signed assertion hidden in an Extensions element, the forged one in its place.
    {
      const { document, response, original, forged } = parts();
      const extensions = document.createElementNS('urn:oasis:names:tc:SAML:2.0:protocol', 'samlp:Extensions');
      response.replaceChild(forged, original);
      extensions.appendChild(original);
      response.insertBefore(extensions, response.firstChild?.nextSibling ?? null);
      expect(await refusal(encode(document))).toBe('signature');
    }
    // XSW 5: the forged assertion takes the signed one's ID; the signed one is hidden.
    {
      const { document, response, original, forged } = parts();
      forged.setAttribute('ID', original.getAttribute('ID') ?? '');
      const signature = original.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0];
      if (signature) forged.insertBefore(signature.cloneNode(true), forged.firstChild?.nextSibling ?? null);
      const extensions = document.createElementNS('urn:oasis:names:tc:SAML:2.0:protocol', 'samlp:Extensions');
      response.replaceChild(forged, original);
      extensions.appendChild(original);
      response.insertBefore(extensions, response.firstChild?.nextSibling ?? null);
      expect(await refusal(encode(document))).toBe('signature');
    }
  });

  it('reads the whole NameID across an inserted comment (never admin@corp.com alone)', async () => {
    const samlResponse = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'admin@corp.com.evil.com',
    });
    const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
    expect(xml).toContain('>admin@corp.com.evil.com<');
    const commented = xml.replace('>admin@corp.com.evil.com<', '>admin@corp.com<!---->.evil.com<');
    const assertion = await verifySamlResponse(
      handle.database,
      connectionId,
      idp,
      sp,
      Buffer.from(commented).toString('base64'),
      new Date(),
    );
    expect(assertion.nameId).toBe('admin@corp.com.evil.com');
    expect(assertion.email).toBe('admin@corp.com.evil.com');
  });

  it('refuses a replayed assertion, even with a new request', async () => {
    const requestId = await request();
    const samlResponse = await idpHarness.loginResponse({ sp, requestId, nameId: 'a@corp.example' });
    expect(await refusal(samlResponse)).toBe('accepted');
    expect(await refusal(samlResponse)).toBe('replay');
    const again = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
      assertionId:
        decode(samlResponse).getElementsByTagNameNS(ASSERTION_NS, 'Assertion')[0]?.getAttribute('ID') ?? '',
    });
    expect(await refusal(again)).toBe('replay');
  });

  it('refuses another audience, recipient, destination or issuer', async () => {
    const cases: [Parameters<typeof idpHarness.loginResponse>[0], SamlRefusalReason][] = [
      [
        { sp, requestId: '', nameId: 'a@corp.example', audience: 'https://other.example/metadata' },
        'audience',
      ],
      [{ sp, requestId: '', nameId: 'a@corp.example', recipient: 'https://other.example/acs' }, 'recipient'],
      [
        {
          sp,
          requestId: '',
          nameId: 'a@corp.example',
          destination: 'https://other.example/acs',
          sign: 'both',
        },
        'destination',
      ],
      [{ sp, requestId: '', nameId: 'a@corp.example', issuer: 'https://other-idp.example' }, 'issuer'],
    ];
    for (const [options, reason] of cases) {
      const requestId = await request();
      expect(await refusal(await idpHarness.loginResponse({ ...options, requestId })), reason).toBe(reason);
      // The request is still pending: a valid answer to it passes.
      expect(await refusal(await idpHarness.loginResponse({ sp, requestId, nameId: 'a@corp.example' }))).toBe(
        'accepted',
      );
    }
    // Without a Destination the response passes (it is optional when only the assertion is signed).
    const requestId = await request();
    expect(
      await refusal(
        await idpHarness.loginResponse({ sp, requestId, nameId: 'a@corp.example', destination: null }),
      ),
    ).toBe('accepted');
  });

  it('refuses an expired or not yet valid assertion (60 s of skew allowed)', async () => {
    const now = Date.now();
    const expired = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
      notBefore: new Date(now - 10 * 60_000),
      notOnOrAfter: new Date(now - 61_000),
    });
    expect(await refusal(expired)).toBe('time');
    const early = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
      notBefore: new Date(now + 2 * 60_000),
    });
    expect(await refusal(early)).toBe('time');
    // Within the skew: passes.
    const skewed = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
      notBefore: new Date(now + 30_000),
    });
    expect(await refusal(skewed)).toBe('accepted');
    // The clock is the caller's: a valid response is refused when told it is seven minutes later.
    const valid = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
    });
    expect(await refusal(valid, new Date(now + 7 * 60_000))).toBe('time');
  });

  it('refuses an unsolicited response, an unknown request, a used one, an expired one, another connection’s', async () => {
    expect(
      await refusal(await idpHarness.loginResponse({ sp, requestId: null, nameId: 'a@corp.example' })),
    ).toBe('in_response_to');
    expect(
      await refusal(
        await idpHarness.loginResponse({ sp, requestId: '_never-made', nameId: 'a@corp.example' }),
      ),
    ).toBe('in_response_to');
    const requestId = await request();
    expect(await refusal(await idpHarness.loginResponse({ sp, requestId, nameId: 'a@corp.example' }))).toBe(
      'accepted',
    );
    expect(await refusal(await idpHarness.loginResponse({ sp, requestId, nameId: 'a@corp.example' }))).toBe(
      'in_response_to',
    );
    // Ten minutes later the request is gone (the clock told is eleven minutes later; the
    // assertion's own window is stretched to match).
    const later = new Date(Date.now() + 11 * 60_000);
    const stale = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
      notOnOrAfter: new Date(later.getTime() + 60_000),
    });
    expect(await refusal(stale, later)).toBe('in_response_to');
    // A request made for another connection of the same IdP.
    const otherConnection = createId('sso');
    const organizationId = (
      await handle.database.selectFrom('sso_connections').select('organization_id').executeTakeFirstOrThrow()
    ).organization_id;
    await handle.database
      .insertInto('sso_connections')
      .values({
        id: otherConnection,
        organization_id: organizationId,
        type: 'saml',
        name: 'Other',
        saml_idp_entity_id: idp.entityId,
        saml_sso_url: idp.ssoUrl,
      })
      .execute();
    const { redirectUrl } = await startSamlSignIn(handle.database, otherConnection, idp, sp, new Date());
    const foreign = await idpHarness.loginResponse({
      sp,
      requestId: authnRequestOf(redirectUrl).id,
      nameId: 'a@corp.example',
    });
    expect(await refusal(foreign)).toBe('in_response_to');
  });

  it('refuses a response whose status is not Success, saying what the IdP answered', async () => {
    const samlResponse = await idpHarness.loginResponse({
      sp,
      requestId: await request(),
      nameId: 'a@corp.example',
    });
    const xml = Buffer.from(samlResponse, 'base64')
      .toString('utf8')
      .replace('urn:oasis:names:tc:SAML:2.0:status:Success', 'urn:oasis:names:tc:SAML:2.0:status:Responder');
    await expect(
      verifySamlResponse(
        handle.database,
        connectionId,
        idp,
        sp,
        Buffer.from(xml).toString('base64'),
        new Date(),
      ),
    ).rejects.toMatchObject({ reason: 'malformed', message: expect.stringContaining('status:Responder') });
  });

  it('refuses what is not a SAML response', async () => {
    expect(await refusal('%%%')).toBe('malformed');
    expect(await refusal(Buffer.from('<html/>').toString('base64'))).toBe('malformed');
    expect(await refusal(Buffer.from('<a><b></a>').toString('base64'))).toBe('malformed');
  });
});
