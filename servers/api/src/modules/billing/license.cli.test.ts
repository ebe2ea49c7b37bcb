import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliStore } from '../../../test/cli-store.ts';
import { captureIo } from '../../../test/process-helpers.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { runCli } from '../../cli.ts';
import { type LicensePayload, signLicense } from './license.ts';
import { deploymentLicense } from './license-store.ts';

// `svc license install <file>` run for real on both engines: the CLI opens the store as it does
// for an operator (a PGlite data directory, or DATABASE_URL), verifies the file and stores it;
// the server then reads it from the database.

const issuer = generateKeyPairSync('ed25519');
const cliOptions = { licensePublicKey: issuer.publicKey };
const DAY = 86_400_000;

function license(overrides: Partial<LicensePayload> = {}): string {
  const now = Date.now();
  return signLicense(
    {
      id: 'lic_CLI1',
      organization: 'Acme Calls GmbH',
      plan: 'team',
      issuedAt: new Date(now - DAY).toISOString(),
      expiresAt: new Date(now + 365 * DAY).toISOString(),
      ...overrides,
    },
    issuer.privateKey,
  );
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A migrated store of the engine for the CLI, and the license the server would read from it. */
async function store(engine: (typeof ENGINES)[number]) {
  const { files, environment, look } = await cliStore(engine, cleanups);
  return {
    files,
    environment,
    read: () => look((database) => deploymentLicense(database, { publicKey: issuer.publicKey })),
  };
}

describe.each(ENGINES)('svc license on %s', (engine) => {
  it('installs a valid license and refuses forged, tampered and expired ones, changing nothing', async () => {
    const { files, environment, read } = await store(engine);
    const valid = join(files, 'license.txt');
    await writeFile(valid, `${license()}\n`);

    const installed = captureIo();
    expect(
      await runCli(['license', 'install', valid, '--json'], environment, installed, cliOptions),
      installed.err,
    ).toBe(0);
    expect(JSON.parse(installed.out)).toMatchObject({
      licenseId: 'lic_CLI1',
      organization: 'Acme Calls GmbH',
      plan: 'team',
      limits: { sessionsPerMonth: 50_000 },
    });

    // Refused: another key's license, a tampered payload, an expired one, no file, not a license.
    const otherKey = join(files, 'other-key.txt');
    const stranger = generateKeyPairSync('ed25519');
    await writeFile(
      otherKey,
      signLicense(
        {
          id: 'lic_FORGED',
          organization: 'Mallory',
          plan: 'enterprise',
          issuedAt: new Date().toISOString(),
          expiresAt: new Date(Date.now() + DAY).toISOString(),
        },
        stranger.privateKey,
      ),
    );
    const [prefix, , signature] = license().split('.');
    const tampered = join(files, 'tampered.txt');
    await writeFile(
      tampered,
      `${prefix}.${Buffer.from(JSON.stringify({ id: 'lic_CLI1', organization: 'Acme Calls GmbH', plan: 'enterprise', issuedAt: new Date(Date.now() - DAY).toISOString(), expiresAt: new Date(Date.now() + DAY).toISOString() })).toString('base64url')}.${signature}`,
    );
    const expired = join(files, 'expired.txt');
    await writeFile(
      expired,
      license({
        id: 'lic_OLD',
        issuedAt: new Date(Date.now() - 400 * DAY).toISOString(),
        expiresAt: new Date(Date.now() - DAY).toISOString(),
      }),
    );
    const garbage = join(files, 'garbage.txt');
    await writeFile(garbage, 'not a license');
    for (const [file, message] of [
      [otherKey, /does not verify/],
      [tampered, /does not verify/],
      [expired, /lic_OLD expired on/],
      [garbage, /Not a license/],
      [join(files, 'missing.txt'), /Cannot read/],
    ] as const) {
      const io = captureIo();
      expect(await runCli(['license', 'install', file], environment, io, cliOptions)).toBe(1);
      expect(io.err).toMatch(message);
      expect(io.out).toBe('');
    }

    const shown = captureIo();
    expect(await runCli(['license', 'show', '--json'], environment, shown, cliOptions)).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({
      status: 'valid',
      plan: 'team',
      license: { id: 'lic_CLI1' },
    });
    expect(await read()).toMatchObject({ status: 'valid', plan: 'team', license: { id: 'lic_CLI1' } });

    // With the key the server ships with (no test key), the same stored license is not valid.
    const shipped = captureIo();
    expect(await runCli(['license', 'show'], environment, shipped)).toBe(0);
    expect(shipped.out).toMatch(
      /No valid license \(invalid\): the free plan\.\nWarning: The installed license is not valid/,
    );
  }, 120_000);
});

describe('svc license usage', () => {
  it('answers usage errors with exit code 2, before opening any store', async () => {
    const environment = { SVC_DATA_DIR: join(tmpdir(), 'svc-license-never-made') };
    for (const argv of [
      ['license'],
      ['license', 'install'],
      ['license', 'renew'],
      ['license', 'show', 'x'],
      ['migrate', 'extra'],
    ]) {
      const io = captureIo();
      expect(await runCli(argv, environment, io, cliOptions), argv.join(' ')).toBe(2);
      expect(io.err).toMatch(/Usage: svc/);
    }
  });
});
