import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { detect } from '@svc/detectors';
import { type CallEvent, type CallSample, parseChunk } from '@svc/protocol';
import { scoreCall } from '@svc/quality-score';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../../test/call-timelines.ts';
import { apiClient, type Json } from '../../../test/http.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { must } from './calls.fixture.ts';

// Calls from the recorded Chromium calls (the protocol's call fixture): one per peer connection,
// scored and timed from its items, the detectors' findings, and the detail's series and events.

const require = createRequire(import.meta.url);
const realCallChunk = readFileSync(require.resolve('@svc/protocol/fixtures/valid/Chunk/call.json'));
const realParsed = parseChunk(JSON.parse(realCallChunk.toString('utf8')));
if (!realParsed.success) throw new Error(realParsed.error.message);
const realItems = realParsed.chunk.events.filter(
  (event): event is CallSample | CallEvent => event.type === 'call.sample' || event.type === 'call.event',
);

describe.each(ENGINES)('calls on %s', (engine) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(engine);
  });
  afterAll(async () => {
    await test?.close();
  });

  const { get } = apiClient(() => test);
  const process = () => test.processingWorker.runUntilIdle();

  describe('the recorded Chromium calls', () => {
    let project: TestProject;
    let calls: Json[];
    beforeAll(async () => {
      project = await test.createProject('real');
      await ingest(test.app, project.projectKey, realCallChunk);
      expect(await process()).toBe(1);
      calls = (await get(`/v1/sessions/${realParsed.chunk.sessionId}/calls`, project)).items;
    });

    it('makes one call per peer connection, scored with scoreCall and timed from the events', () => {
      const pcs = [...new Set(realItems.flatMap((item) => (item.pc === undefined ? [] : [item.pc])))];
      expect(calls.map((call) => call.pc).sort()).toEqual(pcs.sort());
      for (const call of calls) {
        const own = realItems.filter((item) => item.pc === call.pc);
        const samples = own.filter((item): item is CallSample => item.type === 'call.sample');
        const created = must(own.find((item) => item.type === 'call.event' && item.name === 'pc_created'));
        const connected = must(
          own.find(
            (item) =>
              item.type === 'call.event' && item.name === 'connection_state' && item.state === 'connected',
          ),
        );
        const closed = must(own.find((item) => item.type === 'call.event' && item.name === 'pc_closed'));
        expect(call).toMatchObject({
          sessionId: realParsed.chunk.sessionId,
          state: 'closed',
          endReason: 'closed',
          startedAt: new Date(created.t).toISOString(),
          endedAt: new Date(closed.t).toISOString(),
          setupMs: connected.t - created.t,
          connected: true,
          failedToConnect: false,
          relayed: must(samples[0]).conn.relayed,
          sampleCount: samples.length,
        });
        expect(call.qualityScore).toBe(scoreCall(samples) ?? undefined);
        expect(call.id).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
      }
      expect(calls.filter((call) => call.relayed)).toHaveLength(6);
    });

    it("stores the detectors' findings, the same as detect() on the session's items", async () => {
      const expected = detect(realItems, {
        now: Math.max(realParsed.chunk.sentAt, ...realItems.map((item) => item.t)),
      });
      const issues = (await get(`/v1/sessions/${realParsed.chunk.sessionId}/issues`, project)).items.filter(
        (issue: Json) => issue.kind === 'finding',
      );
      const key = (finding: { kind?: string; name?: string; pc?: string }) =>
        `${finding.pc ?? ''}/${finding.name ?? finding.kind}`;
      expect(issues.map(key).sort()).toEqual(expected.map(key).sort());
      expect(expected.length).toBeGreaterThan(0);
      for (const call of calls.filter((call) => call.relayed)) {
        expect(call.issues).toContainEqual({ kind: 'webrtc_relay_fallback', severity: 'info' });
      }
    });

    it('serves the detail: time-aligned track series and event markers', async () => {
      const call = must(calls.find((candidate) => candidate.relayed));
      const detail = await get(`/v1/calls/${call.id}`, project);
      const samples = realItems.filter(
        (item): item is CallSample => item.type === 'call.sample' && item.pc === call.pc,
      );
      expect(detail.tracks).toHaveLength(must(samples[0]).tracks.length);
      for (const track of detail.tracks) {
        const sent = samples.map((sample) => sample.tracks.find((entry) => entry.id === track.id));
        expect(track.series.t).toEqual(samples.map((sample) => sample.t));
        for (const [metric, values] of Object.entries(track.series)) {
          expect(values).toHaveLength(samples.length);
          if (metric === 't' || metric === 'windowMs') continue;
          expect(values).toEqual(sent.map((entry) => (entry as Json)?.[metric] ?? null));
        }
      }
      const eventNames = realItems
        .filter((item) => item.type === 'call.event' && item.pc === call.pc)
        .map((item) => (item as CallEvent).name);
      expect(detail.events.map((event: Json) => event.name)).toEqual(eventNames);
      expect(detail.connection.t).toHaveLength(samples.length);
    });
  });
});
