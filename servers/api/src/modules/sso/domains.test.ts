import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { expectJson } from '../../../test/http.ts';
import { personOf, send, type TestPerson } from '../../../test/people.ts';
import { createTestApp, type TestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { createOrganization } from '../orgs/organizations.ts';
import { createTxtResolver, normalizeDomain, recheckDomains, verifiedDomainOrganization } from './domains.ts';

// Verified domains (issue 26): claimed by an organization, verified by a TXT record that a real
// DNS server in the test process (dns2 on 127.0.0.1, UDP) answers, re-checked daily.

describe('domain names', () => {
  it('normalizes a domain, and refuses IPs, single labels, public suffixes and junk', () => {
    expect(normalizeDomain('  Corp.Example. ')).toBe('corp.example');
    expect(normalizeDomain('bücher.example')).toBe('xn--bcher-kva.example');
    for (const junk of [
      '',
      'com',
      'localhost',
      'co.uk',
      'github.io',
      '10.0.0.1',
      '::1',
      '[::1]',
      'https://corp.example',
      'a@corp.example',
      '-corp.example',
      'corp..example',
      'corp.example:443',
      'corp.123',
      `${'a'.repeat(64)}.example`,
    ]) {
      expect(() => normalizeDomain(junk), junk).toThrow();
    }
  });
});

describe.each(ENGINES)('verified domains on %s', (engine) => {
  let test: TestApp;
  let dns: TestDnsServer;
  let owner: TestPerson;
  let member: TestPerson;
  let otherAdmin: TestPerson;
  let organizationId: string;
  let otherOrganizationId: string;

  beforeAll(async () => {
    dns = await startDnsServer();
    test = await createTestApp(engine, { logger: false }, { SVC_DNS_SERVERS: dns.address });
    const database = test.database.database;
    organizationId = test.first.project.organization_id;
    owner = await personOf(database, organizationId, 'owner');
    member = await personOf(database, organizationId, 'member');
    otherOrganizationId = (await createOrganization(database, 'Rival')).id;
    otherAdmin = await personOf(database, otherOrganizationId, 'admin');
  }, 120_000);

  afterAll(async () => {
    await test?.close();
    await dns?.close();
  });

  it('claims a domain, fails to verify it before the record exists, verifies it after', async () => {
    const claimed = expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains`, owner.headers, {
        domain: 'Corp.Example',
      }),
      201,
    );
    expect(claimed).toMatchObject({
      domain: 'corp.example',
      txtRecord: {
        name: '_svc-verification.corp.example',
        value: expect.stringMatching(/^svc-verification=\S{20,}$/),
      },
      verifiedAt: null,
    });
    expect(claimed.id).toMatch(/^dom_/);
    // Claimed twice by the same organization: 409; junk: 400.
    expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains`, owner.headers, {
        domain: 'corp.example',
      }),
      409,
    );
    expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains`, owner.headers, { domain: '10.1.2.3' }),
      400,
    );
    // A member may not.
    expectJson(await send(test, 'GET', `/v1/orgs/${organizationId}/domains`, member.headers), 403);

    // No record yet: 409, and what was found is said and kept.
    const none = expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
      409,
    );
    expect(none.error).toContain('no TXT record at _svc-verification.corp.example');
    // A record with another value: 409, naming the value found.
    dns.setTxt('_svc-verification.corp.example', ['svc-verification=not-the-token', 'v=spf1 -all']);
    const wrong = expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
      409,
    );
    expect(wrong.error).toContain('svc-verification=not-the-token');
    let [listed] = expectJson(
      await send(test, 'GET', `/v1/orgs/${organizationId}/domains`, owner.headers),
    ).items;
    expect(listed).toMatchObject({
      verifiedAt: null,
      lastCheckError: expect.stringContaining('not-the-token'),
    });
    expect(await verifiedDomainOrganization(test.database.database, 'corp.example')).toBeUndefined();

    dns.setTxt('_svc-verification.corp.example', ['v=spf1 -all', claimed.txtRecord.value]);
    const verified = expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
    );
    expect(verified.verifiedAt).not.toBeNull();
    expect(verified.lastCheckError).toBeNull();
    [listed] = expectJson(await send(test, 'GET', `/v1/orgs/${organizationId}/domains`, owner.headers)).items;
    expect(listed.verifiedAt).toBe(verified.verifiedAt);
    expect(await verifiedDomainOrganization(test.database.database, 'Corp.Example')).toEqual({
      organizationId,
      domainId: claimed.id,
    });

    // Another organization may claim it, but not verify it, even with its own record published.
    const rival = expectJson(
      await send(test, 'POST', `/v1/orgs/${otherOrganizationId}/domains`, otherAdmin.headers, {
        domain: 'corp.example',
      }),
      201,
    );
    dns.setTxt('_svc-verification.corp.example', [claimed.txtRecord.value, rival.txtRecord.value]);
    const refused = expectJson(
      await send(
        test,
        'POST',
        `/v1/orgs/${otherOrganizationId}/domains/${rival.id}/verify`,
        otherAdmin.headers,
      ),
      409,
    );
    expect(refused.error).toContain('verified by another organization');
    // Nor see or touch the first organization's claim.
    expectJson(
      await send(
        test,
        'POST',
        `/v1/orgs/${otherOrganizationId}/domains/${claimed.id}/verify`,
        otherAdmin.headers,
      ),
      404,
    );
    expectJson(
      await send(test, 'DELETE', `/v1/orgs/${otherOrganizationId}/domains/${claimed.id}`, otherAdmin.headers),
      404,
    );
    expectJson(await send(test, 'GET', `/v1/orgs/${organizationId}/domains`, otherAdmin.headers), 404);

    const audit = await test.database.database
      .selectFrom('audit_log')
      .select(['action', 'organization_id'])
      .where('target_id', 'in', [claimed.id, rival.id])
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(audit.map((entry) => entry.action)).toEqual([
      'domain.claimed',
      'domain.verification_failed',
      'domain.verification_failed',
      'domain.verified',
      'domain.claimed',
      'domain.verification_failed',
    ]);
  });

  it('re-checks verified domains daily, and clears the verification when the record is gone', async () => {
    const database = test.database.database;
    const resolver = createTxtResolver([dns.address]);
    const claimed = expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains`, owner.headers, {
        domain: 'recheck.example',
      }),
      201,
    );
    dns.setTxt('_svc-verification.recheck.example', [claimed.txtRecord.value]);
    expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
    );
    const now = Date.now();
    // Checked a moment ago: not due.
    expect((await recheckDomains(database, resolver, new Date(now + 60_000))).checked).toBe(0);
    // A day later, the record still there: checked, still verified.
    const dayLater = new Date(now + 24 * 3600_000 + 60_000);
    const first = await recheckDomains(database, resolver, dayLater);
    expect(first.unverified).toBe(0);
    expect(first.checked).toBeGreaterThanOrEqual(1);
    expect(await verifiedDomainOrganization(database, 'recheck.example')).toBeDefined();
    // The record removed: a day after that, the verification is cleared and audited.
    dns.setTxt('_svc-verification.recheck.example');
    const second = await recheckDomains(
      database,
      resolver,
      new Date(dayLater.getTime() + 24 * 3600_000 + 60_000),
    );
    expect(second.unverified).toBeGreaterThanOrEqual(1);
    expect(await verifiedDomainOrganization(database, 'recheck.example')).toBeUndefined();
    const [listed] = expectJson(
      await send(test, 'GET', `/v1/orgs/${organizationId}/domains`, owner.headers),
    ).items.filter((row: { id: string }) => row.id === claimed.id);
    expect(listed).toMatchObject({
      verifiedAt: null,
      lastCheckError: expect.stringContaining('no TXT record'),
    });
    const entry = await database
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', claimed.id)
      .where('action', '=', 'domain.unverified')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ actor_type: 'system', organization_id: organizationId });
    // A lookup that fails (no DNS server answers) leaves a verified domain verified.
    dns.setTxt('_svc-verification.recheck.example', [claimed.txtRecord.value]);
    expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
    );
    const silent = createTxtResolver(['127.0.0.1:9']);
    const failed = await recheckDomains(database, silent, new Date(now + 5 * 24 * 3600_000));
    expect(failed.unverified).toBe(0);
    expect(await verifiedDomainOrganization(database, 'recheck.example')).toBeDefined();
    // Verify called by hand after the record is gone: 409, and the verification is cleared too.
    dns.setTxt('_svc-verification.recheck.example');
    expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
      409,
    );
    expect(await verifiedDomainOrganization(database, 'recheck.example')).toBeUndefined();
    const byHand = await database
      .selectFrom('audit_log')
      .select(['actor_type', 'action'])
      .where('target_id', '=', claimed.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(byHand).toEqual({ actor_type: 'user', action: 'domain.unverified' });
  });

  it('removes a claimed domain (and its verification), audited', async () => {
    const claimed = expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains`, owner.headers, {
        domain: 'removed.example',
      }),
      201,
    );
    dns.setTxt('_svc-verification.removed.example', [claimed.txtRecord.value]);
    expectJson(
      await send(test, 'POST', `/v1/orgs/${organizationId}/domains/${claimed.id}/verify`, owner.headers),
    );
    expectJson(
      await send(test, 'DELETE', `/v1/orgs/${organizationId}/domains/${claimed.id}`, owner.headers),
      204,
    );
    expectJson(
      await send(test, 'DELETE', `/v1/orgs/${organizationId}/domains/${claimed.id}`, owner.headers),
      404,
    );
    expect(await verifiedDomainOrganization(test.database.database, 'removed.example')).toBeUndefined();
    const entry = await test.database.database
      .selectFrom('audit_log')
      .select('details')
      .where('target_id', '=', claimed.id)
      .where('action', '=', 'domain.removed')
      .executeTakeFirstOrThrow();
    expect(entry.details).toMatchObject({ domain: 'removed.example', wasVerified: true });
  });
});
