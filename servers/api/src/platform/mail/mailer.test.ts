import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '../../../test/smtp.ts';
import { composeMessage } from './compose.ts';
import { createMailer } from './mailer.ts';

const content = composeMessage({
  subject: 'Verify your e-mail address',
  paragraphs: ['Hello <Ada> & welcome.'],
  action: { label: 'Verify', url: 'https://app.example.com/verify-email?token=abc&x=1' },
  footer: 'You got this because someone signed up with this address.',
});

function collectingLog() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    info: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }),
  };
}

describe('composeMessage', () => {
  it('says the same in text and HTML, escaping what users wrote in the HTML', () => {
    expect(content.text).toBe(
      'Hello <Ada> & welcome.\n\nVerify: https://app.example.com/verify-email?token=abc&x=1\n\nYou got this because someone signed up with this address.\n',
    );
    expect(content.html).toContain('<p>Hello &lt;Ada&gt; &amp; welcome.</p>');
    expect(content.html).toContain('href="https://app.example.com/verify-email?token=abc&amp;x=1"');
    expect(content.html).not.toContain('<Ada>');
  });
});

describe('createMailer', () => {
  let smtp: TestSmtpServer;
  let dataDirectory: string;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    dataDirectory = await mkdtemp(join(tmpdir(), 'svc-mail-'));
  });
  afterAll(async () => {
    await smtp?.close();
    await rm(dataDirectory, { recursive: true, force: true });
  });

  it('sends over SMTP to a real server: sender, recipient, subject, text and HTML', async () => {
    const log = collectingLog();
    const mailer = createMailer({
      smtpUrl: smtp.url,
      from: 'Replays <no-reply@example.com>',
      appUrl: 'https://app.example.com',
      dataDirectory,
      log,
    });
    const receipt = await mailer.send({ to: 'ada@example.com', ...content });
    mailer.close();
    expect(receipt.via).toBe('smtp');
    const mail = await smtp.nextMessage('ada@example.com');
    expect(mail.from?.value).toEqual([{ address: 'no-reply@example.com', name: 'Replays' }]);
    expect(mail.subject).toBe('Verify your e-mail address');
    expect(mail.text).toBe(content.text);
    expect(mail.html).toContain('href="https://app.example.com/verify-email?token=abc&amp;x=1"');
    // Nothing written or logged when SMTP is set.
    expect(log.lines).toEqual([]);
    await expect(stat(join(dataDirectory, 'mail'))).rejects.toThrow();
  });

  it('without SMTP writes each message as an .eml file (mode 0600) and logs the file and the link', async () => {
    const log = collectingLog();
    const mailer = createMailer({ appUrl: 'http://127.0.0.1:8080', dataDirectory, log });
    const link = 'http://127.0.0.1:8080/verify-email?token=abc';
    const receipt = await mailer.send({ to: 'bob@example.com', ...content, link });
    expect(receipt.via).toBe('file');
    const files = await readdir(join(dataDirectory, 'mail'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    const file = join(dataDirectory, 'mail', files[0] as string);
    expect(receipt).toEqual({ via: 'file', file });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const mail = await simpleParser(await readFile(file));
    expect(mail.from?.value).toEqual([{ address: 'no-reply@localhost', name: 'svc' }]);
    expect(mail.to).toMatchObject({ value: [{ address: 'bob@example.com' }] });
    expect(mail.subject).toBe('Verify your e-mail address');
    expect(mail.text).toBe(content.text);
    expect(mail.html).toContain('<p>Hello &lt;Ada&gt; &amp; welcome.</p>');
    expect(log.lines).toEqual([
      {
        fields: { to: 'bob@example.com', subject: 'Verify your e-mail address', file, link },
        message: `no SMTP server set (SVC_SMTP_URL): e-mail written to ${file}`,
      },
    ]);
  });
});
