import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../api/test/dns-server.ts';
import { type Dashboard, expectAccessible, startDashboard } from './harness.ts';

// The organization's domains page against the real server, whose DNS lookups go to a dns2 server
// in the test process: an admin claims a domain, reads the TXT record to publish, fails to verify
// it before the record exists and verifies it after; a member does not see the page's controls.

let dashboard: Dashboard;
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer();
  dashboard = await startDashboard({ environment: { SVC_DNS_SERVERS: dns.address } });
}, 120_000);

afterAll(async () => {
  await dashboard?.close();
  await dns?.close();
});

describe('domains', () => {
  it('an admin claims a domain, sees the TXT record, and verifies it once the record is published', async () => {
    const projectId = dashboard.test.first.project.id;
    const { page, errors } = await dashboard.open(`/settings/domains?project=${projectId}`, {
      as: dashboard.people.admin,
    });
    page.setDefaultTimeout(10_000);
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Domains' }).waitFor();
    await page.getByText('No domains yet.').waitFor();

    await page.getByRole('textbox', { name: 'Domain' }).fill('Corp.Example');
    await page.getByRole('button', { name: 'Claim domain' }).click();
    const item = page.getByRole('listitem', { name: 'corp.example' });
    await item.getByText('Not verified').waitFor();
    expect(await item.locator('code').first().textContent()).toBe('_svc-verification.corp.example');
    const value = (await item.getByTestId('txt-value').textContent()) ?? '';
    expect(value).toMatch(/^svc-verification=\S+$/);
    await expectAccessible(page);

    // Not published yet: the lookup's finding is shown.
    await item.getByRole('button', { name: 'Verify corp.example' }).click();
    await page
      .getByText(/no TXT record at _svc-verification\.corp\.example/)
      .first()
      .waitFor();

    dns.setTxt('_svc-verification.corp.example', [value]);
    await item.getByRole('button', { name: 'Verify corp.example' }).click();
    await page.getByText('corp.example is verified.').waitFor();
    await item.getByText(/^Verified /).waitFor();
    await item.getByRole('button', { name: 'Check corp.example again' }).waitFor();
    await expectAccessible(page);
    const row = await dashboard.test.database.database
      .selectFrom('sso_domains')
      .select('verified_at')
      .where('domain', '=', 'corp.example')
      .executeTakeFirstOrThrow();
    expect(row.verified_at).not.toBeNull();
    // The one refusal: the first verification, before the record was published.
    expect(errors).toEqual([expect.stringMatching(/^409 \/v1\/orgs\/org_\w+\/domains\/dom_\w+\/verify$/)]);
  });

  it('a member sees that admins manage domains, and no Domains link', async () => {
    const projectId = dashboard.test.first.project.id;
    const { page, errors } = await dashboard.open(`/settings/domains?project=${projectId}`, {
      as: dashboard.people.member,
    });
    page.setDefaultTimeout(10_000);
    await page.getByText("Domains are managed by the organization's admins and owners.").waitFor();
    expect(
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Domains' }).count(),
    ).toBe(0);
    expect(await page.getByRole('button', { name: 'Claim domain' }).count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
