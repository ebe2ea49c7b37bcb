import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { prefersHtml } from './web-app.ts';

const withAccept = (accept?: string) =>
  ({ headers: accept === undefined ? {} : { accept } }) as FastifyRequest;

describe('prefersHtml', () => {
  it.each([
    // Browsers' navigations.
    ['text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', true],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
    ['text/html', true],
    ['application/json;q=0.5, text/html', true],
    // API clients, fetch() without an Accept, curl, and ties.
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['application/json, text/plain, */*', false],
    ['text/html;q=0.5, application/json', false],
    ['text/html, application/json', false],
    ['text/html;q=0, */*', false],
    ['TEXT/HTML;Q=0.9, application/*;q=0.8', true],
  ])('%s → %s', (accept, expected) => {
    expect(prefersHtml(withAccept(accept))).toBe(expected);
  });
});
