import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { expect } from 'vitest';

// The embedded default has no SMTP server: each message is an .eml file in <dataDir>/mail
// (servers/api README, Accounts). Tests read them as a person reads their inbox.

/**
 * The path and query of the newest link to `<base>/<page>?token=…` e-mailed to `to`, waiting
 * briefly for the message.
 */
export async function mailedLink(
  dataDirectory: string,
  base: string,
  to: string,
  page: string,
): Promise<string> {
  const directory = join(dataDirectory, 'mail');
  const pattern = new RegExp(`${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/${page}\\?token=[0-9a-z]+)`);
  let found: string | undefined;
  await expect
    .poll(
      async () => {
        const files = await readdir(directory).catch(() => [] as string[]);
        const newestFirst = await Promise.all(
          files.map(async (file) => ({ file, time: (await stat(join(directory, file))).mtimeMs })),
        );
        newestFirst.sort((a, b) => b.time - a.time);
        for (const { file } of newestFirst) {
          const mail = await simpleParser(await readFile(join(directory, file)));
          const address = Array.isArray(mail.to) ? mail.to[0] : mail.to;
          const match = pattern.exec(mail.text ?? '');
          if (address?.value[0]?.address === to && match !== null) {
            found = match[1];
            return true;
          }
        }
        return false;
      },
      { timeout: 10_000 },
    )
    .toBe(true);
  return found as string;
}
