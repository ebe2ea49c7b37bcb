import { describe, expect, it } from 'vitest';
import { normalizeRoute } from './index.ts';

describe('normalizeRoute', () => {
  it.each([
    ['https://app.example.com/orders/42/items/?tab=2#top', '/orders/:id/items'],
    ['http://localhost:3000', '/'],
    ['https://app.example.com?x=1#y', '/'],
    ['', '/'],
    ['/', '/'],
    ['//', '/'],
    ['docs/intro', '/docs/intro'],
    ['/a//b///', '/a/b'],
    ['/users/550e8400-E29B-41d4-a716-446655440000/edit', '/users/:id/edit'],
    ['/runs/01ARZ3NDEKTSV4RRFFQ69G5FAV', '/runs/:id'],
    ['/blobs/deadbeefcafebabe0123', '/blobs/:id'],
    ['/blobs/deadbeefcafebab', '/blobs/deadbeefcafebab'],
    ['/pay/cus_9s6XKzkNRiz8i3', '/pay/cus_9s6XKzkNRiz8i3'],
    ['/share/V1StGXR8Z5jdHi6BmyTa', '/share/:id'],
    ['/blog/my-post-about-the-2024-elections', '/blog/my-post-about-the-2024-elections'],
    ['/internationalizationally', '/internationalizationally'],
    ['/files/a%20b/42', '/files/a%20b/:id'],
    ['/v2/items', '/v2/items'],
    ['/orders/:id', '/orders/:id'],
  ])('%s → %s', (input, route) => {
    expect(normalizeRoute(input)).toBe(route);
  });

  it('takes the first matching pattern as the route', () => {
    const patterns = ['/docs/:slug', '/u/:id/settings', '/u/:user/:tab'];
    expect(normalizeRoute('https://x.test/docs/getting-started?q=1', patterns)).toBe('/docs/:slug');
    expect(normalizeRoute('/u/alice/settings/', patterns)).toBe('/u/:id/settings');
    expect(normalizeRoute('/u/alice/billing', patterns)).toBe('/u/:user/:tab');
    expect(normalizeRoute('/docs/a/b', patterns)).toBe('/docs/a/b');
    expect(normalizeRoute('/u/42', patterns)).toBe('/u/:id');
  });

  it('normalizes a pattern as it returns it', () => {
    expect(normalizeRoute('/docs/x', ['docs/:slug/'])).toBe('/docs/:slug');
  });
});
