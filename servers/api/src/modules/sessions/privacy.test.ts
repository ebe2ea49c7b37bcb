import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, sessionMeta, type WireItem } from '../../../test/call-timelines.ts';
import { expectJson } from '../../../test/http.ts';
import { captureLogs, newSessionId, postChunk, validChunkFixture } from '../../../test/ingest-helpers.ts';
import { createTestApp, type TestApp, type TestProject } from '../../../test/test-app.ts';
import { ENGINES } from '../../../test/test-database.ts';
import { updateProjectSettings } from '../projects/projects.ts';
import { DEFAULT_PROJECT_SETTINGS } from '../projects/settings.ts';

// PROTOCOL.md §3: privacy is enforced in the SDK and re-checked on the server. Each rule gets
// forbidden data sent straight to POST /v1/ingest, and the chunk read back through
// GET /v1/sessions/{id}/chunks/{seq} must not hold it.

const t = 1763700000000;
const pc = 'pc_01KAJBCH80XTQ0YDPAV81S476S';

/** A real Chromium offer, unredacted: host candidates on 127.0.0.1, 192.0.2.2, ::1 and fd00::2. */
const OFFER = readFileSync(
  createRequire(import.meta.url).resolve('@svc/protocol/fixtures/sdp/chromium156-offer.sdp'),
  'utf8',
);

const pairChange = {
  t: t + 800,
  type: 'call.event',
  pc,
  name: 'candidate_pair_change',
  localType: 'srflx',
  remoteType: 'host',
  protocol: 'udp',
  relayed: false,
  network: 'wifi',
  initial: true,
};

describe.each(ENGINES)('privacy re-check on POST /v1/ingest on %s', (engine) => {
  let test: TestApp;
  let strictProject: TestProject;
  const logs = captureLogs();
  beforeAll(async () => {
    test = await createTestApp(engine, { logger: logs.logger });
    strictProject = await test.createProject('Strict');
    await updateProjectSettings(test.database.database, strictProject.project.id, {
      ...DEFAULT_PROJECT_SETTINGS,
      privacy: { mode: 'strict', requestQueryParams: [] },
    });
  });
  afterAll(async () => {
    await test?.close();
  });

  /** Sends one seq-0 chunk of these events; answers 200 with what was redacted. */
  const send = async (events: readonly WireItem[], project = test.first) => {
    const sessionId = newSessionId();
    const response = await postChunk(
      test.app,
      project.projectKey,
      chunkBytes({ sessionId, seq: 0, sentAt: t + 60_000, meta: sessionMeta(t), events }),
    );
    const answer = expectJson<{
      seq: number;
      duplicate: boolean;
      redacted?: Array<{ rule: string; count: number; paths: string[] }>;
    }>(response, 200);
    const stored = await test.app.inject({
      method: 'GET',
      url: `/v1/sessions/${sessionId}/chunks/0`,
      headers: project.headers,
    });
    const chunk = expectJson<{ events: WireItem[] }>(stored, 200);
    return { sessionId, answer, stored: stored.body, events: chunk.events };
  };

  it("stores our SDK's call chunk byte for byte and answers { seq, duplicate } only", async () => {
    const recorded = await validChunkFixture('call');
    const { sessionId } = JSON.parse(recorded.toString()) as { sessionId: string };
    // In strict mode the SDK sends no device labels (the recording has the fake devices' labels).
    const strictChunk = JSON.parse(recorded.toString()) as { events: Array<Record<string, unknown>> };
    for (const event of strictChunk.events) {
      delete event.label;
      delete event.labels;
    }
    const unlabelled = Buffer.from(JSON.stringify(strictChunk));
    expect(unlabelled.length).toBeLessThan(recorded.length);
    for (const [project, call] of [
      [test.first, recorded],
      [strictProject, unlabelled],
    ] as const) {
      const response = await postChunk(test.app, project.projectKey, call);
      expect(response.json()).toEqual({ seq: 0, duplicate: false });
      const stored = await test.app.inject({
        method: 'GET',
        url: `/v1/sessions/${sessionId}/chunks/0`,
        headers: project.headers,
      });
      expect(stored.rawPayload.equals(call)).toBe(true);
    }
  });

  it('candidate_address: candidate addresses and candidate strings never reach storage, in any field', async () => {
    const { items } = callTimeline({ pc, start: t, samples: 3, windowMs: 1000 });
    const samples = items.filter((item) => item.type === 'call.sample');
    const leakySample = {
      ...(samples[0] as WireItem),
      conn: {
        state: 'connected',
        localAddress: '192.0.2.7',
        remoteCandidate:
          'candidate:842163049 1 udp 1677729535 198.51.100.4 56143 typ srflx raddr 10.0.0.2 rport 56143',
      },
    };
    const events = [
      ...items.filter((item) => item !== samples[0]),
      leakySample,
      {
        ...pairChange,
        local: { address: '192.0.2.7', port: 56143, ip: '192.0.2.7' },
        remote: 'fd00::2 via 6a3f0c2e-1d5b-4c43-9e7a-0f1b2c3d4e5f.local',
      },
    ].sort((left, right) => left.t - right.t);
    const { sessionId, answer, stored } = await send(events);
    for (const secret of ['192.0.2.7', '198.51.100.4', '10.0.0.2', 'fd00::2', '.local', '56143', 'typ srflx'])
      expect(stored).not.toContain(secret);
    expect(answer.redacted).toEqual([expect.objectContaining({ rule: 'candidate_address', count: 6 })]);
    // What is allowed stays: candidate types, protocol, network type.
    expect(stored).toContain('"localType":"srflx","remoteType":"host","protocol":"udp"');
    // The redacted chunk is processed as any other: the call is there, its items are clean.
    await test.processingWorker.runUntilIdle();
    const calls = await test.database.database
      .selectFrom('calls')
      .select('pc')
      .where('session_id', '=', sessionId)
      .execute();
    expect(calls).toEqual([{ pc }]);
    const callItems = await test.database.database
      .selectFrom('call_items')
      .select('item')
      .where('session_id', '=', sessionId)
      .execute();
    expect(callItems.length).toBe(events.length);
    expect(JSON.stringify(callItems)).not.toContain('192.0.2.7');
  });

  it('ice_server: no server address or URL in errorText, no server list or credentials anywhere', async () => {
    const events = [
      {
        t,
        type: 'call.event',
        pc,
        name: 'pc_created',
        state: 'new',
        iceServers: 2,
        tracked: true,
        configuration: {
          iceServers: [
            { urls: ['turn:turn.example.com:3478'], username: 'alice', credential: 'hunter2' },
            { urls: 'stun:stun.example.com' },
          ],
        },
      },
      {
        t: t + 300,
        type: 'call.event',
        pc,
        name: 'ice_candidate_error',
        errorCode: 701,
        errorText: 'TURN allocate request timed out: turn:turn.example.com:3478?transport=udp',
        url: 'turn:turn.example.com:3478',
        address: '192.0.2.9',
        port: 3478,
      },
      {
        t: t + 301,
        type: 'call.event',
        pc,
        name: 'ice_candidate_error',
        errorCode: 701,
        errorText: 'STUN host stun.example.com:19302 unreachable',
      },
    ];
    const { answer, stored, events: kept } = await send(events);
    for (const secret of [
      'turn.example.com',
      'stun.example.com',
      'alice',
      'hunter2',
      '192.0.2.9',
      '3478',
      '19302',
    ])
      expect(stored).not.toContain(secret);
    expect(kept[0]).toEqual({
      t,
      type: 'call.event',
      pc,
      name: 'pc_created',
      state: 'new',
      iceServers: 2,
      tracked: true,
      configuration: {},
    });
    expect(kept[1]).toMatchObject({
      errorCode: 701,
      errorText: 'TURN allocate request timed out: [redacted]',
    });
    expect(kept[2]).toMatchObject({ errorText: 'STUN host [redacted] unreachable' });
    expect(answer.redacted).toEqual([
      { rule: 'candidate_address', count: 2, paths: ['events[1].address', 'events[1].port'] },
      {
        rule: 'ice_server',
        count: 4,
        paths: [
          'events[0].configuration.iceServers',
          'events[1].errorText',
          'events[1].url',
          'events[2].errorText',
        ],
      },
    ]);
  });

  it('sdp: stored without candidates, c=, ice-ufrag and ice-pwd lines', async () => {
    const sdpEvent = {
      t: t + 50,
      type: 'call.event',
      pc,
      name: 'sdp',
      side: 'local',
      sdpType: 'offer',
      sdp: OFFER,
    };
    const { answer, events: kept, stored } = await send([sdpEvent]);
    const sdp = (kept[0] as unknown as { sdp: string }).sdp;
    expect(sdp).not.toMatch(/^(a=candidate|c=|a=ice-ufrag|a=ice-pwd)/m);
    for (const secret of ['127.0.0.1', '192.0.2.2', 'fd00::2', 'typ host'])
      expect(stored).not.toContain(secret);
    for (const [, credential] of OFFER.matchAll(/^a=ice-(?:ufrag|pwd):(.+)$/gm))
      expect(stored).not.toContain(credential as string);
    // The rest of the description stays.
    expect(sdp).toMatch(/^m=audio 9 UDP\/TLS\/RTP\/SAVPF/m);
    expect(sdp).toMatch(/^a=fingerprint:sha-256 /m);
    expect(answer.redacted).toEqual([{ rule: 'sdp', count: 1, paths: ['events[0].sdp'] }]);
  });

  it('sdp in strict privacy mode: never stored, not even redacted', async () => {
    const sdpEvent = {
      t: t + 50,
      type: 'call.event',
      pc,
      name: 'sdp',
      side: 'local',
      sdpType: 'offer',
      sdp: OFFER,
    };
    const created = {
      t,
      type: 'call.event',
      pc,
      name: 'pc_created',
      state: 'new',
      iceServers: 1,
      tracked: true,
    };
    const {
      answer,
      events: kept,
      stored,
    } = await send(
      [created, sdpEvent, { ...pairChange, description: { type: 'answer', sdp: 'v=0\r\na=mid:0' } }],
      strictProject,
    );
    expect(kept).toEqual([created, { ...pairChange, description: { type: 'answer' } }]);
    expect(stored).not.toMatch(/v=0|a=mid|"sdp"/);
    expect(answer.redacted).toEqual([
      { rule: 'sdp', count: 2, paths: ['events[1]', 'events[2].description.sdp'] },
    ]);
  });

  it('device_id: a deviceId that is not a salted hash is dropped', async () => {
    const acquired = { t, type: 'call.event', name: 'media_acquired', kind: 'audio' };
    const rawChromiumId = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const events = [
      {
        ...acquired,
        deviceId: rawChromiumId,
        groupId: 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0a1b2',
      },
      { ...acquired, t: t + 1, kind: 'video', deviceId: '3fa9c0d2e4b61a7f' },
    ];
    const { answer, events: kept, stored } = await send(events);
    expect(stored).not.toContain(rawChromiumId);
    expect(stored).not.toContain('groupId');
    expect(kept).toEqual([acquired, events[1]]);
    expect(answer.redacted).toEqual([
      { rule: 'device_id', count: 2, paths: ['events[0].deviceId', 'events[0].groupId'] },
    ]);
  });

  it('data_channel_payload: a data_channel event keeps its label and state only', async () => {
    const channel = { t, type: 'call.event', pc, name: 'data_channel', label: 'chat', state: 'open' };
    const {
      answer,
      events: kept,
      stored,
    } = await send([
      { ...channel, data: 'meet me at 5, code 4711', message: { text: 'secret plan' }, id: 1 },
    ]);
    expect(kept).toEqual([channel]);
    for (const secret of ['meet me', 'secret plan', '4711']) expect(stored).not.toContain(secret);
    expect(answer.redacted).toEqual([
      {
        rule: 'data_channel_payload',
        count: 3,
        paths: ['events[0].data', 'events[0].message', 'events[0].id'],
      },
    ]);
  });

  it('device_label: kept as the browser supplies them, removed in strict privacy mode', async () => {
    const acquired = {
      t,
      type: 'call.event',
      name: 'media_acquired',
      kind: 'video',
      label: 'FaceTime HD Camera (Built-in)',
    };
    const inventory = {
      t: t + 1,
      type: 'call.event',
      name: 'device_inventory',
      audioinput: 1,
      videoinput: 1,
      audiooutput: 0,
      labels: { audioinput: ['MacBook Pro Microphone'], videoinput: ['FaceTime HD Camera (Built-in)'] },
    };
    const channel = { t: t + 2, type: 'call.event', pc, name: 'data_channel', label: 'chat', state: 'open' };
    const standard = await send([acquired, inventory, channel]);
    expect(standard.events).toEqual([acquired, inventory, channel]);
    expect(standard.answer.redacted).toBeUndefined();

    const strict = await send([acquired, inventory, channel], strictProject);
    const { label: _label, ...acquiredWithout } = acquired;
    const { labels: _labels, ...inventoryWithout } = inventory;
    // A data channel's label is the app's name for it, not a device's: it stays.
    expect(strict.events).toEqual([acquiredWithout, inventoryWithout, channel]);
    expect(strict.stored).not.toMatch(/FaceTime|MacBook/);
    expect(strict.answer.redacted).toEqual([
      { rule: 'device_label', count: 2, paths: ['events[0].label', 'events[1].labels'] },
    ]);
  });

  it('request_query: a request URL keeps its origin and path, never its query string or fragment', async () => {
    const clean = {
      t,
      type: 'request',
      initiator: 'fetch',
      method: 'GET',
      url: 'https://api.example.com/cart',
      status: 200,
      durationMs: 12,
    };
    const leaky = { ...clean, t: t + 1, url: 'https://api.example.com/reset?token=s3cret#step2' };
    const fragment = { ...clean, t: t + 2, url: 'https://api.example.com/docs#intro' };
    const { events, stored, answer } = await send([clean, leaky, fragment]);
    expect(events).toEqual([
      clean,
      { ...leaky, url: 'https://api.example.com/reset' },
      { ...fragment, url: 'https://api.example.com/docs' },
    ]);
    expect(stored).not.toMatch(/s3cret|step2|intro/);
    expect(answer.redacted).toEqual([
      { rule: 'request_query', count: 2, paths: ['events[1].url', 'events[2].url'] },
    ]);
  });

  it('request_query: keeps the query parameters the project allows, and removes the others', async () => {
    const project = await test.createProject('Allowed query parameters');
    const patched = await test.app.inject({
      method: 'PATCH',
      url: `/v1/projects/${project.project.id}`,
      headers: project.headers,
      payload: { settings: { privacy: { requestQueryParams: ['page', 'sort'] } } },
    });
    expect(expectJson(patched, 200).settings.privacy).toEqual({
      mode: 'standard',
      requestQueryParams: ['page', 'sort'],
    });
    const refused = await test.app.inject({
      method: 'PATCH',
      url: `/v1/projects/${project.project.id}`,
      headers: project.headers,
      payload: { settings: { privacy: { requestQueryParams: ['a=b'] } } },
    });
    expect(refused.statusCode).toBe(400);
    const request = { t, type: 'request', initiator: 'xhr', method: 'GET', status: 200, durationMs: 9 };
    // As the browser SDK sends it with `networkQueryParams: ['page', 'sort']`: kept byte for byte.
    const sent = { ...request, url: 'https://api.example.com/orders?page=2&sort=date' };
    const leaky = {
      ...request,
      t: t + 1,
      url: 'https://api.example.com/orders?page=3&token=s3cret&sort=id#top',
    };
    const none = { ...request, t: t + 2, url: 'https://api.example.com/orders?token=s3cret' };
    const { events, stored, answer } = await send([sent, leaky, none], project);
    expect(events).toEqual([
      sent,
      { ...leaky, url: 'https://api.example.com/orders?page=3&sort=id' },
      { ...none, url: 'https://api.example.com/orders' },
    ]);
    expect(stored).not.toMatch(/s3cret|#top/);
    expect(answer.redacted).toEqual([
      { rule: 'request_query', count: 2, paths: ['events[1].url', 'events[2].url'] },
    ]);
  });

  it('logs what it removed (never the values) once per stored chunk, and answers a retry alike', async () => {
    const events = [{ ...pairChange, localAddress: '192.0.2.7' }];
    const sessionId = newSessionId();
    const bytes = chunkBytes({ sessionId, seq: 0, sentAt: t + 60_000, meta: sessionMeta(t), events });
    const first = await postChunk(test.app, test.first.projectKey, bytes);
    const retry = await postChunk(test.app, test.first.projectKey, bytes);
    expect(first.json()).toEqual({
      seq: 0,
      duplicate: false,
      redacted: [{ rule: 'candidate_address', count: 1, paths: ['events[0].localAddress'] }],
    });
    expect(retry.json()).toEqual({ ...first.json(), duplicate: true });
    const lines = logs.lines.filter((line) => line.sessionId === sessionId);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'removed 1 value(s) of call data that the privacy rules forbid',
        redacted: first.json().redacted,
      }),
    ]);
    expect(JSON.stringify(logs.lines)).not.toContain('192.0.2.7');
  });
});

describe('ingest counters', () => {
  it('are logged when the app closes: chunks and fields dropped, values redacted by rule', async () => {
    const logs = captureLogs();
    const test = await createTestApp('pglite', { logger: logs.logger });
    try {
      const meta = { ...sessionMeta(t), os: { name: 'Linux', version: '' } };
      for (const events of [[{ ...pairChange, address: '192.0.2.7', deviceId: 'default' }], []]) {
        const bytes = chunkBytes({ sessionId: newSessionId(), seq: 0, sentAt: t + 60_000, meta, events });
        expect((await postChunk(test.app, test.first.projectKey, bytes)).statusCode).toBe(200);
      }
    } finally {
      await test.close();
    }
    expect(
      logs.lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('ingest dropped')),
    ).toEqual([
      expect.objectContaining({
        msg: 'ingest dropped optional meta fields from 2 chunk(s) and redacted call data in 1',
        chunksWithDroppedMeta: 2,
        droppedMetaFields: { 'meta.os.version': 2 },
        chunksRedacted: 1,
        redacted: { candidate_address: 1, device_id: 1 },
      }),
    ]);
  });
});
