import { afterEach, describe, expect, it } from 'vitest';
import { callTimeline, chunkBytes, sessionMeta } from '../../../test/call-timelines.ts';
import { eventually } from '../../../test/eventually.ts';
import { deflate, newSessionId } from '../../../test/ingest-helpers.ts';
import { captureIo, createScratchDirectories, createTestServers } from '../../../test/process-helpers.ts';
import { withMigratedStore } from '../../../test/test-database.ts';
import { runCli } from '../../cli.ts';
import type { RunningServer } from '../../server.ts';

// The real server on the embedded store (its background call worker on, as `pnpm start` runs
// it) and `svc reprocess-calls` after a change of detector thresholds.

const servers = createTestServers();
const scratch = createScratchDirectories('svc-calls-');

afterEach(async () => {
  await servers.closeAll();
  await scratch.removeAll();
});

const start = (directory: string) => servers.start({ SVC_DATA_DIR: directory });
const { stop } = servers;

const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);

// Two server starts and two CLI runs, each opening PGlite: more than the 30 s default on a busy
// 2-core machine.
describe('svc reprocess-calls', { timeout: 120_000 }, () => {
  it('recomputes stored calls with the thresholds in force, without the server', async () => {
    // An empty store at the latest schema (a copy of the run's template).
    const directory = await withMigratedStore(await scratch.make());
    const server = await start(directory);
    const credentials = server.credentials;
    if (credentials === null) throw new Error('expected first-start credentials');
    const headers = { authorization: `Bearer ${credentials.apiToken}` };
    const sessionId = newSessionId();
    const { items, end } = callTimeline({ start: T0, samples: 20, lossPct: () => 12 });
    const response = await fetch(`${server.url}/v1/ingest`, {
      method: 'POST',
      headers: {
        'x-service-project-key': credentials.projectKey,
        'x-service-encoding': 'json+deflate',
        'content-type': 'application/octet-stream',
      },
      body: deflate(chunkBytes({ sessionId, seq: 0, sentAt: end, meta: sessionMeta(T0), events: items })),
    });
    expect(response.status, await response.clone().text()).toBe(200);

    const readCall = async (target: RunningServer) => {
      const page = await fetch(`${target.url}/v1/sessions/${sessionId}/calls`, { headers });
      return ((await page.json()) as { items: Array<{ issues: Array<{ kind: string }> }> }).items[0];
    };
    // The server's background worker processes the call by itself.
    const call = await eventually(() => readCall(server), { timeoutMs: 10_000 });
    expect(call?.issues.map((issue) => issue.kind)).toContain('webrtc_packet_loss');

    const project = (await (await fetch(`${server.url}/v1/projects/current`, { headers })).json()) as {
      id: string;
    };
    const patched = await fetch(`${server.url}/v1/projects/${project.id}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ settings: { detectorThresholds: { lossPct: 20 } } }),
    });
    expect(patched.status).toBe(200);
    await stop(server);

    const io = captureIo();
    expect(await runCli(['reprocess-calls', '--json'], { SVC_DATA_DIR: directory }, io), io.err).toBe(0);
    expect(JSON.parse(io.out)).toEqual({ queued: 1, processed: 1, failures: 0 });
    const unknown = captureIo();
    expect(
      await runCli(
        ['reprocess-calls', '--project', 'proj_01KAJBCH80XTQ0YDPAV81S476S'],
        { SVC_DATA_DIR: directory },
        unknown,
      ),
    ).toBe(2);
    expect(unknown.err).toMatch(/No project proj_01KAJBCH80XTQ0YDPAV81S476S/);

    const again = await start(directory);
    const recomputed = await readCall(again);
    expect(recomputed?.issues.map((issue) => issue.kind)).not.toContain('webrtc_packet_loss');
  });
});
