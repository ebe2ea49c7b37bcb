import { createHash, randomBytes } from 'node:crypto';
import { PROTOCOL_LIMITS } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { deflate, deflateBomb, rewriteChunk, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { decodeChunk, inflateBody } from './decode-chunk.ts';

describe('inflateBody', () => {
  it('inflates zlib-wrapped deflate exactly', async () => {
    const bytes = Buffer.from('{"hello":"world"}');
    expect(await inflateBody(deflate(bytes), 1024)).toEqual({ success: true, bytes });
  });

  it('stops a deflate bomb (1 GB of zeros) at the output limit, with bounded memory', async () => {
    const bomb = await deflateBomb();
    expect(bomb.byteLength).toBeLessThanOrEqual(PROTOCOL_LIMITS.maxCompressedBytes);
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakArrayBuffers = before.arrayBuffers;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakRss = Math.max(peakRss, now.rss);
      peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers);
    }, 1);
    const started = performance.now();
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => inflateBody(bomb, PROTOCOL_LIMITS.maxInflatedBytes)),
    );
    clearInterval(sampler);
    for (const result of results) expect(result).toMatchObject({ success: false, reason: 'too_large' });
    expect(performance.now() - started).toBeLessThan(5_000);
    // Four bombs at once: each stops at 16 MiB, far below the 1 GB they would inflate to.
    expect(peakArrayBuffers - before.arrayBuffers).toBeLessThan(4 * 40 * 1024 * 1024);
    expect(peakRss - before.rss).toBeLessThan(300 * 1024 * 1024);
  });

  it('refuses data that is not deflate, or is truncated', async () => {
    expect(await inflateBody(Buffer.from('plain text'), 1024)).toMatchObject({
      success: false,
      reason: 'malformed',
    });
    const good = deflate(Buffer.alloc(10_000, 0x61));
    expect(await inflateBody(good.subarray(0, good.byteLength - 4), 1_000_000)).toMatchObject({
      success: false,
      reason: 'malformed',
    });
  });

  it('behaves the same on both paths: small bodies on the event loop, larger ones on the pool', async () => {
    // 8 MiB of zeros deflate to about 8 KiB: a small bomb, inflated on the event loop.
    const smallBomb = deflate(Buffer.alloc(7 * 1024 * 1024));
    expect(smallBomb.byteLength).toBeLessThanOrEqual(8 * 1024);
    expect(await inflateBody(smallBomb, 1024 * 1024)).toMatchObject({ success: false, reason: 'too_large' });
    const random = randomBytes(20_000);
    const large = deflate(random);
    expect(large.byteLength).toBeGreaterThan(8 * 1024);
    expect(await inflateBody(large, 1_000_000)).toEqual({ success: true, bytes: random });
    expect(await inflateBody(large, 19_999)).toMatchObject({ success: false, reason: 'too_large' });
    expect(await inflateBody(large.subarray(0, large.byteLength - 10), 1_000_000)).toMatchObject({
      success: false,
      reason: 'malformed',
    });
  });

  it('accepts exactly the limit and refuses one byte more', async () => {
    expect(await inflateBody(deflate(Buffer.alloc(1000)), 1000)).toMatchObject({ success: true });
    expect(await inflateBody(deflate(Buffer.alloc(1001)), 1000)).toMatchObject({
      success: false,
      reason: 'too_large',
    });
  });
});

describe('decodeChunk', () => {
  const standard = { strictPrivacy: false };

  it('keeps the bytes as sent and the parsed chunk, listing skipped unknown events', async () => {
    const fixture = await validChunkFixture('recording-seq-1');
    const withUnknown = rewriteChunk(fixture, {
      events: [
        { t: 1763700010000, type: 'network.request', url: 'https://x' },
        ...JSON.parse(fixture.toString()).events,
      ],
    });
    const result = await decodeChunk(deflate(withUnknown), 'json+deflate', standard);
    expect(result.success).toBe(true);
    if (!result.success) return;
    expect(Buffer.from(result.decoded.json).equals(withUnknown)).toBe(true);
    expect(result.decoded.asSent).toBe(true);
    expect(result.decoded.deflated).toEqual(deflate(withUnknown));
    expect(result.decoded.contentSha256).toEqual(createHash('sha256').update(withUnknown).digest());
    expect(result.decoded.dropped).toEqual([]);
    expect(result.decoded.redacted).toEqual([]);
    expect(result.decoded.skipped).toEqual([{ index: 0, type: 'network.request' }]);
    expect(result.decoded.chunk.events).toHaveLength(6);
    expect(result.decoded.receivedBytes).toBe(deflate(withUnknown).byteLength);
  });

  it('re-encodes a chunk without the optional meta fields it dropped, hashing the bytes as sent', async () => {
    const fixture = await validChunkFixture('recording-seq-0');
    const sent = JSON.parse(fixture.toString());
    const withBadMeta = rewriteChunk(fixture, {
      meta: { ...sent.meta, os: { name: 'Linux', version: '' }, release: '' },
    });
    const result = await decodeChunk(deflate(withBadMeta), 'json+deflate', standard);
    if (!result.success) throw new Error(result.message);
    const { decoded } = result;
    expect(decoded.dropped.map(({ path }) => path)).toEqual(['meta.os.version', 'meta.release']);
    expect(decoded.asSent).toBe(false);
    expect(decoded.deflated).toBeUndefined();
    expect(decoded.contentSha256).toEqual(createHash('sha256').update(withBadMeta).digest());
    const { release: _release, ...keptMeta } = sent.meta;
    expect(JSON.parse(Buffer.from(decoded.json).toString())).toEqual({
      ...sent,
      meta: { ...keptMeta, os: { name: 'Linux' } },
    });
    expect(decoded.chunk.meta?.os).toEqual({ name: 'Linux' });
  });

  it('re-encodes a chunk without what the privacy re-check removed, parsed again when whole events went', async () => {
    const fixture = await validChunkFixture('recording-seq-1');
    const sent = JSON.parse(fixture.toString());
    const pc = 'pc_01KAJBCH80XTQ0YDPAV81S476S';
    const sdpEvent = {
      t: 1763700010000,
      type: 'call.event',
      pc,
      name: 'sdp',
      side: 'local',
      sdpType: 'offer',
      sdp: 'v=0\r\nc=IN IP4 192.0.2.7\r\n',
    };
    const withSdp = rewriteChunk(fixture, { events: [sdpEvent, ...sent.events] });
    const standardResult = await decodeChunk(withSdp, 'json', standard);
    if (!standardResult.success) throw new Error(standardResult.message);
    expect(standardResult.decoded.redacted).toEqual([{ rule: 'sdp', count: 1, paths: ['events[0].sdp'] }]);
    expect(JSON.parse(Buffer.from(standardResult.decoded.json).toString()).events[0].sdp).toBe('v=0\r\n');
    // An sdp event is a call event of a name the protocol does not know: skipped, at index 0.
    expect(standardResult.decoded.skipped).toEqual([{ index: 0, type: 'call.event', name: 'sdp' }]);

    const strictResult = await decodeChunk(withSdp, 'json', { strictPrivacy: true });
    if (!strictResult.success) throw new Error(strictResult.message);
    const { decoded } = strictResult;
    expect(decoded.redacted).toEqual([{ rule: 'sdp', count: 1, paths: ['events[0]'] }]);
    expect(JSON.parse(Buffer.from(decoded.json).toString())).toEqual(sent);
    // Positions are those of the stored chunk: nothing skipped any more.
    expect(decoded.skipped).toEqual([]);
    expect(decoded.chunk.events).toHaveLength(sent.events.length);
  });

  it('answers 400 or 413 with a message, never throwing', async () => {
    expect(await decodeChunk(Buffer.alloc(0), 'json', standard)).toMatchObject({
      success: false,
      status: 400,
    });
    expect(await decodeChunk(Buffer.from('{'), 'json', standard)).toMatchObject({
      success: false,
      status: 400,
    });
    expect(await decodeChunk(Buffer.from('{}'), 'json', standard)).toMatchObject({
      success: false,
      status: 400,
      message: expect.stringMatching(/^Invalid chunk/),
    });
    expect(
      await decodeChunk(Buffer.alloc(PROTOCOL_LIMITS.maxInflatedBytes + 1, 0x20), 'json', standard),
    ).toMatchObject({
      success: false,
      status: 413,
    });
  });
});
