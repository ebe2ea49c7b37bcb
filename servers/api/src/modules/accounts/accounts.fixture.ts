import type { ParsedMail } from 'mailparser';
import { expect } from 'vitest';

// What the accounts tests (accounts.*.test.ts) share.

/** The password the tests sign up with. */
export const PASSWORD = 'correct horse battery staple';

/**
 * The token of the one-time link (to the dashboard's `page`) in a message's text, after checking
 * the HTML has the same link.
 */
export function linkToken(mail: ParsedMail, appUrl: string, page = 'verify-email'): string {
  const match = new RegExp(
    `${appUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${page}\\?token=([0-9a-z]+)`,
  ).exec(mail.text ?? '');
  expect(match, mail.text).not.toBeNull();
  const token = (match as RegExpExecArray)[1] as string;
  expect(mail.html).toContain(`${appUrl}/${page}?token=${token}`);
  return token;
}
