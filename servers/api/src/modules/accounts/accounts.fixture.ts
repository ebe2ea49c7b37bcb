import type { LightMyRequestResponse } from 'fastify';
import type { ParsedMail } from 'mailparser';
import { expect } from 'vitest';
import { expectJson } from '../../../test/http.ts';
import type { TestSmtpServer } from '../../../test/smtp.ts';
import type { TestApp } from '../../../test/test-app.ts';

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

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type SendOptions = {
  cookie?: string;
  csrf?: string;
  address?: string;
  userAgent?: string;
  headers?: Record<string, string>;
};

/**
 * The calls the accounts tests make on `test()`'s app, each from its own client address (per
 * `prefix`, so that files and tests do not share rate limits), with e-mail through `smtp`.
 */
export function accountsClient(test: () => TestApp, smtp: () => TestSmtpServer, prefix: string) {
  let addresses = 0;
  const nextAddress = () => {
    addresses += 1;
    return `${prefix}.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
  };
  function send(method: Method, url: string, body?: unknown, options: SendOptions = {}) {
    return test().app.inject({
      method,
      url,
      remoteAddress: options.address ?? `${prefix}.255.1`,
      headers: {
        ...(options.cookie === undefined ? {} : { cookie: `service_session=${options.cookie}` }),
        ...(options.csrf === undefined ? {} : { 'x-service-csrf': options.csrf }),
        ...(options.userAgent === undefined ? {} : { 'user-agent': options.userAgent }),
        ...options.headers,
      },
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    });
  }
  function sessionCookie(response: LightMyRequestResponse) {
    return response.cookies.find((cookie) => cookie.name === 'service_session')?.value;
  }
  /** Signs in with a password: the cookie's value, the CSRF token and the user. */
  async function login(email: string, password = PASSWORD, userAgent?: string) {
    const response = await send(
      'POST',
      '/auth/login',
      { email, password },
      { address: nextAddress(), ...(userAgent === undefined ? {} : { userAgent }) },
    );
    const body = expectJson(response, 200);
    return { cookie: sessionCookie(response) as string, csrf: body.csrfToken as string, user: body.user };
  }
  /** Signs up, follows the e-mail's link and signs in. */
  async function signedIn(email: string, userAgent?: string) {
    const address = nextAddress();
    expectJson(await send('POST', '/auth/signup', { email, password: PASSWORD }, { address }), 201);
    const token = linkToken(await smtp().nextMessage(email), test().configuration.appUrl);
    expectJson(await send('POST', '/auth/verify-email', { token }, { address }), 200);
    return login(email, PASSWORD, userAgent);
  }
  return { nextAddress, send, sessionCookie, login, signedIn };
}
