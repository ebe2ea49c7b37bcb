import { CompiledQuery, type Kysely } from 'kysely';
import { ulid } from 'ulid';
import type { Database } from '../src/platform/database/schema.ts';
import { createRandom, pick, type Weighted } from './random.ts';

// Bulk-seeds calls for the calls benchmark, straight into the database (PostgreSQL or PGlite,
// through the server's own kysely handle), shaped like what call processing writes
// (src/modules/processing/process-session.ts): `sessions` rows, one `calls` row per peer connection with its
// connection series, and `call_tracks` rows whose series arrays are as long as their
// `sample_count`. Rows are generated here from a deterministic random and sent in batches as one
// jsonb parameter (`jsonb_to_recordset`), which both engines take alike.

/** A standard normal variate (Box-Muller). */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

const round1 = (value: number) => Math.round(value * 10) / 10;

const DEVICES: Weighted<'desktop' | 'mobile' | 'tablet'> = [
  ['desktop', 65],
  ['mobile', 30],
  ['tablet', 5],
];
const DESKTOP_BROWSERS: Weighted<[string, string]> = [
  [['Chrome', '131.0'], 62],
  [['Firefox', '133.0'], 15],
  [['Edge', '131.0'], 13],
  [['Safari', '18.1'], 10],
];
const MOBILE_BROWSERS: Weighted<[string, string]> = [
  [['Chrome', '131.0'], 50],
  [['Safari', '18.1'], 38],
  [['Samsung Internet', '26.0'], 8],
  [['Firefox', '133.0'], 4],
];
const DESKTOP_OS: Weighted<[string, string]> = [
  [['Windows', '11'], 55],
  [['macOS', '15.1'], 35],
  [['Linux', '6.8'], 10],
];
const NETWORKS: Weighted<string> = [
  ['wifi', 55],
  ['ethernet', 20],
  ['cellular', 18],
  ['vpn', 4],
  ['unknown', 3],
];
const MOBILE_NETWORKS: Weighted<string> = [
  ['wifi', 50],
  ['cellular', 45],
  ['unknown', 5],
];
const FAILURE_REASONS: Weighted<string> = [
  ['ice_failed', 50],
  ['connect_timeout', 30],
  ['ice_candidate_error_701', 15],
  ['ice_candidate_error_401', 5],
];
/** Kinds a connected call with an issue shows (severity low or higher), and their severities. */
const ISSUE_KINDS: Weighted<[string, 'critical' | 'high' | 'medium' | 'low']> = [
  [['webrtc_packet_loss', 'medium'], 30],
  [['webrtc_high_latency', 'medium'], 20],
  [['webrtc_freeze', 'high'], 15],
  [['webrtc_low_resolution', 'low'], 12],
  [['webrtc_audio_dropout', 'high'], 8],
  [['webrtc_cpu_limited', 'medium'], 7],
  [['webrtc_one_way_media', 'critical'], 4],
  [['webrtc_reconnect_storm', 'high'], 4],
];
const SEVERITY_RANK = ['low', 'medium', 'high', 'critical'];

const TRACKS = [
  { id: 'trk_ai', kind: 'audio', dir: 'in' },
  { id: 'trk_ao', kind: 'audio', dir: 'out' },
  { id: 'trk_vi', kind: 'video', dir: 'in' },
  { id: 'trk_vo', kind: 'video', dir: 'out' },
] as const;

/** The webrtc collector's default sample interval (settings.webrtc.sampleIntervalSec = 5). */
const WINDOW_MS = 5_000;
const RELEASES = 20;
const USERS = 3_000;

interface SeedSession {
  id: string;
  start: number;
  browser: string;
  browserVersion: string;
  os: string;
  osVersion: string;
  device: 'desktop' | 'mobile' | 'tablet';
  release: string;
  userId: string | null;
  end: number;
}

interface SeedCall {
  id: string;
  session: SeedSession;
  pc: string;
  start: number;
  setupMs: number | null;
  failureReason: string | null;
  relayed: boolean;
  network: string | null;
  quality: number | null;
  issueKinds: string[];
  maxSeverity: string | null;
  hasIssue: boolean;
  tracks: number;
  samples: number;
}

/** What was seeded, counted from the rows. */
export interface SeededCalls {
  calls: number;
  sessions: number;
  tracks: number;
  /** Sum of `call_tracks.sample_count` (every series array is that long). */
  trackSamples: number;
  failedToConnect: number;
  relayed: number;
  hasIssue: number;
  /** Start times span [oldest, newest). */
  oldest: number;
  newest: number;
  /** A release and an end user for the filtered lists (a typical one of each). */
  release: string;
  endUser: string;
  /** Calls of that release with Firefox, and of that end user. */
  firefoxReleaseCalls: number;
  endUserCalls: number;
  seconds: number;
}

/**
 * Sample counts for the connected calls, heavy-tailed (log-normal: most calls are short, a few
 * last an hour) and scaled so the tracks' samples add up to `target` exactly (or one short of
 * an odd target: tracks come in pairs).
 */
function assignSamples(random: () => number, calls: SeedCall[], target: number): void {
  const connected = calls.filter((call) => call.tracks > 0);
  const weights = connected.map(() => Math.exp(1.1 * gaussian(random)));
  const total = (scale: number) =>
    connected.reduce(
      (sum, call, index) => sum + call.tracks * Math.max(1, Math.round((weights[index] as number) * scale)),
      0,
    );
  let low = 0;
  let high = 1;
  while (total(high) < target) high *= 2;
  for (let step = 0; step < 50; step++) {
    const middle = (low + high) / 2;
    if (total(middle) < target) low = middle;
    else high = middle;
  }
  connected.forEach((call, index) => {
    call.samples = Math.max(1, Math.round((weights[index] as number) * high));
  });
  // The rounding left a small remainder: one sample more or less on a few calls.
  let left = target - connected.reduce((sum, call) => sum + call.samples * call.tracks, 0);
  for (let index = 0; left !== 0 && index < connected.length * 2; index++) {
    const call = connected[(index * 7919) % connected.length] as SeedCall;
    if (left >= call.tracks) {
      call.samples += 1;
      left -= call.tracks;
    } else if (left <= -call.tracks && call.samples > 1) {
      call.samples -= 1;
      left += call.tracks;
    }
  }
}

/** The sessions and calls to seed, in start order. */
function generate(count: number, trackSamples: number, now: number) {
  const random = createRandom(11_2026);
  const span = 30 * 24 * 3600 * 1000;
  const oldest = now - span;
  // Sessions of one to three calls, start times uniform over the 30 days (ending 3 h before now).
  const planned: Array<{ start: number; size: number }> = [];
  for (let total = 0; total < count; ) {
    const size = Math.min(
      count - total,
      pick(random, [
        [1, 75],
        [2, 20],
        [3, 5],
      ] as const),
    );
    planned.push({ start: oldest + Math.floor(random() * (span - 3 * 3600 * 1000)), size });
    total += size;
  }
  planned.sort((a, b) => a.start - b.start);

  const sessions: SeedSession[] = [];
  const calls: SeedCall[] = [];
  const callsOf = new Map<SeedSession, SeedCall[]>();
  for (const { start, size } of planned) {
    const device = pick(random, DEVICES);
    const [browser, browserVersion] = pick(random, device === 'desktop' ? DESKTOP_BROWSERS : MOBILE_BROWSERS);
    const [os, osVersion] =
      device === 'desktop'
        ? pick(random, DESKTOP_OS)
        : browser === 'Safari'
          ? ['iOS', '18.1']
          : random() < 0.9
            ? ['Android', '15']
            : ['iOS', '18.1'];
    // Users: 70% of sessions are identified, some users far more active than others.
    const userId = random() < 0.7 ? `user-${1 + Math.floor(USERS * random() ** 2)}` : null;
    const session: SeedSession = {
      id: `ses_${ulid(start, random)}`,
      start,
      browser,
      browserVersion,
      os,
      osVersion,
      device,
      release: `web@1.${Math.floor(((start - oldest) / span) * RELEASES)}.0`,
      userId,
      end: start,
    };
    sessions.push(session);
    const own: SeedCall[] = [];
    for (let index = 0; index < size; index++) {
      const failed = random() < 0.05;
      const relayed = !failed && random() < 0.105;
      // Setup time: log-normal, median ~450 ms, a long tail to several seconds.
      const setupMs = failed ? null : Math.max(40, Math.round(450 * Math.exp(0.7 * gaussian(random))));
      // Quality: weighted high (a quarter of calls below 75, ~12% below 40).
      const quality = failed ? null : Math.round(100 * (1 - random() ** 4));
      const issueKinds: string[] = [];
      let maxSeverity: string | null = null;
      if (failed) {
        issueKinds.push('webrtc_connect_failure');
        maxSeverity = 'critical';
      } else if ((quality as number) < 40 || random() < 0.06) {
        const kinds = 1 + Math.floor(random() * random() * 3);
        for (let kind = 0; kind < kinds; kind++) {
          const [name, severity] = pick(random, ISSUE_KINDS);
          if (issueKinds.includes(name)) continue;
          issueKinds.push(name);
          if (maxSeverity === null || SEVERITY_RANK.indexOf(severity) > SEVERITY_RANK.indexOf(maxSeverity))
            maxSeverity = severity;
        }
      }
      const hasIssue = issueKinds.length > 0;
      if (relayed) {
        issueKinds.push('webrtc_relay_fallback');
        maxSeverity ??= 'info';
      }
      const call: SeedCall = {
        id: '',
        session,
        pc: '',
        start: 0,
        setupMs,
        failureReason: failed ? pick(random, FAILURE_REASONS) : null,
        relayed,
        network:
          failed && random() < 0.5 ? null : pick(random, device === 'desktop' ? NETWORKS : MOBILE_NETWORKS),
        quality,
        issueKinds,
        maxSeverity,
        hasIssue,
        // Audio and video both ways, or audio only (a fifth of calls); none before connecting.
        tracks: failed ? 0 : random() < 0.8 ? 4 : 2,
        samples: 0,
      };
      own.push(call);
      calls.push(call);
    }
    callsOf.set(session, own);
  }
  assignSamples(random, calls, trackSamples);
  // Now that their lengths are known: the calls of a session one after the other.
  for (const session of sessions) {
    let start = session.start + 5_000 + Math.floor(random() * 60_000);
    for (const call of callsOf.get(session) ?? []) {
      call.start = start;
      call.id = `call_${ulid(start, random)}`;
      call.pc = `pc_${ulid(start, random)}`;
      session.end = callEnd(call) + 2_000;
      start = callEnd(call) + 10_000 + Math.floor(random() * 120_000);
    }
  }
  calls.sort((a, b) => a.start - b.start || (a.id < b.id ? -1 : 1));
  return { sessions, calls, oldest, random };
}

function connectedAt(call: SeedCall): number {
  return call.start + (call.setupMs ?? 0);
}

function callEnd(call: SeedCall): number {
  return call.setupMs === null ? call.start + 5_000 : connectedAt(call) + call.samples * WINDOW_MS;
}

/** A track's series (src/modules/calls/summarize-calls.ts `trackSeries`): `t`, `windowMs`, then each metric. */
function trackSeries(random: () => number, call: SeedCall, track: (typeof TRACKS)[number]) {
  const badness = (100 - (call.quality ?? 100)) / 100;
  const n = call.samples;
  const t: number[] = [];
  const windowMs: number[] = [];
  const lossPct: number[] = [];
  const rttMs: number[] = [];
  const jitterMs: number[] = [];
  const concealmentPct: number[] = [];
  const fps: number[] = [];
  const w: number[] = [];
  const h: number[] = [];
  const freezes: number[] = [];
  const freezeMs: number[] = [];
  const kbps: number[] = [];
  const codec: string[] = [];
  const stalled: boolean[] = [];
  const base = connectedAt(call);
  for (let index = 0; index < n; index++) {
    const rough = random() < badness;
    const loss = rough ? round1(random() * 12 * badness) : 0;
    t.push(base + (index + 1) * WINDOW_MS);
    windowMs.push(WINDOW_MS);
    lossPct.push(track.dir === 'in' ? loss : 0);
    rttMs.push(Math.round(30 + random() * 40 + (rough ? 300 * badness : 0)));
    codec.push(track.kind === 'audio' ? 'audio/opus' : 'video/VP8');
    stalled.push(false);
    if (track.kind === 'audio') {
      jitterMs.push(round1(2 + random() * 4 + (rough ? 30 * badness : 0)));
      concealmentPct.push(round1(loss * 0.8));
    } else {
      const height = rough && badness > 0.4 ? 360 : 720;
      fps.push(rough ? 15 : 30);
      w.push(Math.round((height * 16) / 9));
      h.push(height);
      const frozen = rough && random() < 0.2;
      freezes.push(frozen ? 1 : 0);
      freezeMs.push(frozen ? Math.round(200 + random() * 800) : 0);
      kbps.push(Math.round((height === 720 ? 1500 : 600) * (0.8 + random() * 0.4)));
    }
  }
  const series: Record<string, unknown[]> = { t, windowMs, lossPct, rttMs };
  if (track.kind === 'audio') {
    if (track.dir === 'in') Object.assign(series, { jitterMs, concealmentPct });
  } else {
    Object.assign(series, { fps, h, kbps });
    if (track.dir === 'in') Object.assign(series, { w, freezes, freezeMs });
  }
  Object.assign(series, { codec, stalled });
  return series;
}

function callRecord(random: () => number, call: SeedCall) {
  const { session } = call;
  const n = call.samples;
  const times = Array.from({ length: n }, (_, index) => connectedAt(call) + (index + 1) * WINDOW_MS);
  const end = callEnd(call);
  const candidate = call.relayed ? 'relay' : random() < 0.6 ? 'srflx' : 'host';
  const connected = call.setupMs !== null;
  return {
    id: call.id,
    session_id: session.id,
    pc: call.pc,
    started: call.start,
    ended: end,
    setup_ms: call.setupMs,
    connected,
    failure_reason: call.failureReason,
    relayed: call.relayed,
    local_types: connected ? [candidate === 'relay' ? 'relay' : 'host'] : [],
    remote_types: connected ? [candidate] : [],
    network_type: call.network,
    browser_name: session.browser,
    browser_version: session.browserVersion,
    os_name: session.os,
    os_version: session.osVersion,
    device: session.device,
    release: session.release,
    end_user_id: session.userId,
    quality_score: call.quality,
    codec: call.tracks === 0 ? null : call.tracks === 4 ? 'video/VP8' : 'audio/opus',
    codecs: call.tracks === 0 ? [] : call.tracks === 4 ? ['audio/opus', 'video/VP8'] : ['audio/opus'],
    sample_count: n,
    track_count: call.tracks,
    issue_kinds: call.issueKinds,
    has_issue: call.hasIssue,
    max_severity: call.maxSeverity,
    series: {
      t: times,
      windowMs: times.map(() => WINDOW_MS),
      score: times.map(() =>
        Math.min(100, Math.max(0, (call.quality ?? 0) + Math.round(gaussian(random) * 5))),
      ),
      state: times.map(() => 'connected'),
      relayed: times.map(() => call.relayed),
      network: times.map(() => call.network),
    },
  };
}

async function run(database: Kysely<Database>, text: string, parameters: readonly unknown[]) {
  return database.executeQuery(CompiledQuery.raw(text, [...parameters]));
}

/**
 * Inserts `count` calls of `projectId` (and their sessions) over the 30 days before `now`, with
 * `trackSamples` track samples in all, then ANALYZEs the tables. Works on both engines.
 *
 * @example
 * ```ts
 * const seeded = await seedCalls(handle.database, projectId, { calls: 100_000, trackSamples: 1_000_000 });
 * ```
 */
export async function seedCalls(
  database: Kysely<Database>,
  projectId: string,
  options: { calls: number; trackSamples: number; now?: number; batch?: number },
): Promise<SeededCalls> {
  const started = performance.now();
  const now = options.now ?? Date.now();
  const { sessions, calls, oldest, random } = generate(options.calls, options.trackSamples, now);
  const batch = options.batch ?? 5_000;

  for (let offset = 0; offset < sessions.length; offset += batch * 2) {
    const rows = sessions.slice(offset, offset + batch * 2).map((session) => ({
      id: session.id,
      started: session.start,
      ended: session.end,
      browser_name: session.browser,
      browser_version: session.browserVersion,
      os_name: session.os,
      os_version: session.osVersion,
      device: session.device,
      release: session.release,
      user_id: session.userId,
    }));
    await run(
      database,
      `insert into sessions (project_id, id, started_at, last_event_at, duration_ms, url, user_agent,
         browser_name, browser_version, os_name, os_version, device, viewport_width, viewport_height,
         release, environment, user_id, user_email, recording_mode, sdk_name, sdk_version,
         chunk_count, max_seq, stored_bytes)
       select $1, s.id, to_timestamp(s.started / 1000.0), to_timestamp(s.ended / 1000.0), s.ended - s.started,
         'https://app.example.com/call', 'Mozilla/5.0 (bench)', s.browser_name, s.browser_version, s.os_name,
         s.os_version, s.device, 1440, 900, s.release, 'production', s.user_id,
         case when s.user_id is not null then s.user_id || '@example.com' end, 'always', '@svc/browser-sdk',
         '0.1.0', 1 + (s.ended - s.started) / 20000, (s.ended - s.started) / 20000,
         (1 + (s.ended - s.started) / 20000) * 1500
       from jsonb_to_recordset($2::jsonb) as s(id text, started bigint, ended bigint, browser_name text,
         browser_version text, os_name text, os_version text, device text, release text, user_id text)`,
      [projectId, JSON.stringify(rows)],
    );
  }

  for (let offset = 0; offset < calls.length; offset += batch) {
    const slice = calls.slice(offset, offset + batch);
    await run(
      database,
      `insert into calls (project_id, id, session_id, pc, started_at, last_item_at, ended_at, duration_ms, state,
         end_reason, setup_ms, connected, failed_to_connect, failure_reason, relayed, local_types, remote_types,
         protocol, network_type, browser_name, browser_version, os_name, os_version, device, release,
         environment, end_user_id, quality_score, codec, codecs, sample_count, track_count, issue_kinds,
         issue_count, has_issue, max_severity, series)
       select $1, c.id, c.session_id, c.pc, to_timestamp(c.started / 1000.0), to_timestamp(c.ended / 1000.0),
         to_timestamp(c.ended / 1000.0), c.ended - c.started, 'closed', 'closed', c.setup_ms, c.connected,
         not c.connected, c.failure_reason, c.relayed, c.local_types, c.remote_types,
         case when c.connected then 'udp' end, c.network_type, c.browser_name, c.browser_version, c.os_name,
         c.os_version, c.device, c.release, 'production', c.end_user_id, c.quality_score, c.codec, c.codecs,
         c.sample_count, c.track_count, c.issue_kinds, jsonb_array_length(c.issue_kinds), c.has_issue,
         c.max_severity, c.series
       from jsonb_to_recordset($2::jsonb) as c(id text, session_id text, pc text, started bigint, ended bigint,
         setup_ms integer, connected boolean, failure_reason text, relayed boolean, local_types jsonb,
         remote_types jsonb, network_type text, browser_name text, browser_version text, os_name text,
         os_version text, device text, release text, end_user_id text, quality_score smallint, codec text,
         codecs jsonb, sample_count integer, track_count integer, issue_kinds jsonb, has_issue boolean,
         max_severity text, series jsonb)`,
      [projectId, JSON.stringify(slice.map((call) => callRecord(random, call)))],
    );
    const tracks = slice.flatMap((call) =>
      TRACKS.slice(0, call.tracks).map((track) => ({
        call_id: call.id,
        track_id: track.id,
        kind: track.kind,
        dir: track.dir,
        sample_count: call.samples,
        series: trackSeries(random, call, track),
      })),
    );
    await run(
      database,
      `insert into call_tracks (project_id, call_id, track_id, kind, dir, sample_count, series)
       select $1, t.call_id, t.track_id, t.kind, t.dir, t.sample_count, t.series
       from jsonb_to_recordset($2::jsonb) as t(call_id text, track_id text, kind text, dir text,
         sample_count integer, series jsonb)`,
      [projectId, JSON.stringify(tracks)],
    );
  }
  for (const table of ['sessions', 'calls', 'call_tracks']) await run(database, `analyze ${table}`, []);

  const counted = await run(
    database,
    `select (select count(*)::int from calls where project_id = $1) as calls,
       (select count(*)::int from sessions where project_id = $1) as sessions,
       (select count(*)::int from call_tracks where project_id = $1) as tracks,
       (select coalesce(sum(sample_count), 0)::int from call_tracks where project_id = $1) as track_samples,
       (select count(*)::int from call_tracks where project_id = $1
          and jsonb_array_length(series -> 't') <> sample_count) as misaligned`,
    [projectId],
  );
  const totals = counted.rows[0] as {
    calls: number;
    sessions: number;
    tracks: number;
    track_samples: number;
    misaligned: number;
  };
  if (totals.misaligned !== 0)
    throw new Error(`${totals.misaligned} seeded tracks have series of another length`);

  // A typical release (the middle one) and a typical end user (the median call count of users).
  const release = `web@1.${Math.floor(RELEASES / 2)}.0`;
  const perUser = new Map<string, number>();
  for (const call of calls) {
    const user = call.session.userId;
    if (user !== null) perUser.set(user, (perUser.get(user) ?? 0) + 1);
  }
  const users = [...perUser.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  const [endUser, endUserCalls] = users[Math.floor(users.length / 2)] ?? ['user-1', 0];
  return {
    calls: totals.calls,
    sessions: totals.sessions,
    tracks: totals.tracks,
    trackSamples: totals.track_samples,
    failedToConnect: calls.filter((call) => call.setupMs === null).length,
    relayed: calls.filter((call) => call.relayed).length,
    hasIssue: calls.filter((call) => call.hasIssue).length,
    oldest,
    newest: now,
    release,
    endUser,
    firefoxReleaseCalls: calls.filter(
      (call) => call.session.browser === 'Firefox' && call.session.release === release,
    ).length,
    endUserCalls,
    seconds: (performance.now() - started) / 1000,
  };
}
