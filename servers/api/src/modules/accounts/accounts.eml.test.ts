import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { linkToken, PASSWORD } from './accounts.fixture.ts';

// Accounts on a server with no SMTP configured (the embedded default): e-mail goes to files.

describe.each(ENGINES)('accounts without SMTP on %s', (engine) => {
  it('writes the verification e-mail as an .eml file in the data directory and logs its link', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const test = await createTestApp(
      engine,
      { logger: { level: 'info', stream } },
      { SVC_PUBLIC_URL: 'https://replay.example.com', SVC_APP_URL: 'https://app.example.com' },
    );
    try {
      const email = `eml-${engine}@example.com`;
      const signup = await test.app.inject({
        method: 'POST',
        url: '/auth/signup',
        payload: { email, password: PASSWORD },
      });
      expect(signup.statusCode).toBe(201);
      const directory = join(test.dataDirectory, 'mail');
      const files = await readdir(directory);
      expect(files).toEqual([expect.stringMatching(/\.eml$/)]);
      const mail = await simpleParser(await readFile(join(directory, files[0] as string)));
      expect(mail.to).toMatchObject({ value: [{ address: email }] });
      const token = linkToken(mail, test.configuration.appUrl);
      const logged = lines.find((line) => line.component === 'mail');
      expect(logged).toMatchObject({
        to: email,
        file: join(directory, files[0] as string),
        link: `${test.configuration.appUrl}/verify-email?token=${token}`,
      });
      expect(JSON.stringify(lines)).not.toContain(PASSWORD);
      const verified = await test.app.inject({
        method: 'POST',
        url: '/auth/verify-email',
        payload: { token },
      });
      expect(verified.statusCode).toBe(200);
    } finally {
      await test.close();
    }
  });
});
