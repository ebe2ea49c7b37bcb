import { signWebhook } from '@svc/webhook-verify';
import type { FastifyBaseLogger } from 'fastify';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { AttemptOutcome, DeliveryStatus } from '../../platform/database/tables/notifications.table.ts';
import type { DestinationPolicy } from '../../platform/http/destination-policy.ts';
import { claimStatement } from '../../platform/jobs/queue.ts';
import { activeSecrets } from './channel-secrets.ts';
import { postWebhook, type WebhookResult } from './webhook-sender.ts';

/** Attempts of one delivery at most (PROTOCOL.md §6). */
export const MAX_ATTEMPTS = 6;

/**
 * Delay before attempt n+1 after attempt n failed (index n-1): 1 min, 10 min, 1 h, 4 h, 12 h.
 * With the first attempt at once, the sixth comes ~17 h after the first: within 24 h.
 */
export const RETRY_DELAYS_MS: readonly number[] = [60_000, 600_000, 3_600_000, 14_400_000, 43_200_000];

/** Deliveries end within this window after they were queued; Retry-After never pushes past it. */
export const DELIVERY_WINDOW_MS = 24 * 3600 * 1000;

/** A receiver must answer within this (PROTOCOL.md §6). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** ± this share of a delay is random jitter, so receivers that failed together do not get retried in lockstep. */
const JITTER = 0.1;

/**
 * When the attempt after a failed attempt `attempt` is due: the schedule's delay with ±10 %
 * jitter, pushed later by a `Retry-After` (429/503), and never past the delivery's 24 h window
 * (the last attempt goes out at its end). `undefined` when no attempt is left: six were made, or
 * the window is over.
 *
 * @example
 * ```ts
 * nextAttemptAt(1, { queuedAt, now, random: () => 0.5 }); // now + 60 s
 * ```
 */
export function nextAttemptAt(
  attempt: number,
  context: { queuedAt: number; now: number; retryAfterMs?: number | undefined; random?: () => number },
): number | undefined {
  if (attempt >= MAX_ATTEMPTS) return undefined;
  const base = RETRY_DELAYS_MS[attempt - 1] ?? RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1] ?? 0;
  const random = context.random ?? Math.random;
  const delay = Math.round(base * (1 + JITTER * (2 * random() - 1)));
  const windowEnd = context.queuedAt + DELIVERY_WINDOW_MS;
  if (context.now >= windowEnd) return undefined;
  // The schedule alone (≤ 1.1 × 17 h 11 min) always fits; a Retry-After may push up to the end.
  return Math.min(context.now + Math.max(delay, context.retryAfterMs ?? 0), windowEnd);
}

/** The claim of due deliveries ($1 now, $2 the lease's end, $3 the limit): see {@link claimDeliveries}. */
const CLAIM_DELIVERIES = claimStatement(
  { name: 'deliveries', key: ['project_id', 'id'] },
  {
    now: '$1::timestamptz',
    leaseUntil: '$2::timestamptz',
    limit: '$3::int',
    ready: "status = 'pending'",
    set: 'updated_at = now()',
    returning: ['project_id', 'id', 'event_id', 'channel_id', 'attempts', 'created_at'],
  },
);

/** A delivery a worker holds for one attempt. */
export interface ClaimedDelivery {
  projectId: string;
  id: string;
  eventId: string;
  channelId: string;
  /** This attempt's number (1..6). */
  attempt: number;
  queuedAt: number;
}

/**
 * Claims up to `limit` due deliveries for one attempt each, for `leaseMs`. The claim counts the
 * attempt, so two workers (in this process or others on one PostgreSQL) never make the same
 * attempt: `for update skip locked`, and a lease that outlives the 10 s timeout. A worker that
 * dies mid-attempt loses the delivery when its lease ends; the next worker makes the next attempt
 * (at least once: the receiver may see the event twice, with the same `evt_` id).
 */
export async function claimDeliveries(
  database: Kysely<Database>,
  limit: number,
  leaseMs: number,
  now: number,
): Promise<ClaimedDelivery[]> {
  const { rows } = await database.executeQuery<{
    project_id: string;
    id: string;
    event_id: string;
    channel_id: string;
    attempts: number;
    created_at: Date;
  }>(CompiledQuery.raw(CLAIM_DELIVERIES, [new Date(now), new Date(now + leaseMs), limit]));
  return rows.map((row) => ({
    projectId: row.project_id,
    id: row.id,
    eventId: row.event_id,
    channelId: row.channel_id,
    attempt: row.attempts,
    queuedAt: new Date(row.created_at).getTime(),
  }));
}

/** What a delivery attempt needs from the process. */
export interface DeliveryDependencies {
  database: Kysely<Database>;
  masterKey: MasterKey;
  policy: DestinationPolicy;
  log: FastifyBaseLogger;
}

/** How one attempt went. */
export interface AttemptResult {
  outcome: AttemptOutcome;
  status: DeliveryStatus;
  statusCode?: number;
  error?: string;
  nextAttemptAt?: number;
}

/** What an attempt needs besides its claim: the envelope and where it goes. */
interface LoadedDelivery {
  payload: string;
  projectId: string;
  wrappedDataKey: Uint8Array;
  channel:
    | {
        id: string;
        url: string;
        enabled: boolean;
        sealed_secret: Uint8Array;
        sealed_previous_secret: Uint8Array | null;
        previous_secret_expires_at: Date | null;
      }
    | undefined;
}

/**
 * The envelopes and channels of claimed deliveries, in one statement, keyed by delivery id. A
 * delivery whose event is gone is missing from the map.
 */
export async function loadDeliveries(
  database: Kysely<Database>,
  claimed: readonly ClaimedDelivery[],
): Promise<Map<string, LoadedDelivery>> {
  const loaded = new Map<string, LoadedDelivery>();
  if (claimed.length === 0) return loaded;
  const rows = await database
    .selectFrom('deliveries')
    .innerJoin('notification_events', (join) =>
      join
        .onRef('notification_events.project_id', '=', 'deliveries.project_id')
        .onRef('notification_events.id', '=', 'deliveries.event_id'),
    )
    .innerJoin('projects', 'projects.id', 'deliveries.project_id')
    .leftJoin('notification_channels', (join) =>
      join
        .onRef('notification_channels.project_id', '=', 'deliveries.project_id')
        .onRef('notification_channels.id', '=', 'deliveries.channel_id'),
    )
    .select([
      'deliveries.id as delivery_id',
      'notification_events.payload',
      'projects.id as project_id',
      'projects.wrapped_data_key',
      'notification_channels.id as channel_id',
      'notification_channels.url',
      'notification_channels.enabled',
      'notification_channels.sealed_secret',
      'notification_channels.sealed_previous_secret',
      'notification_channels.previous_secret_expires_at',
    ])
    .where(({ eb, or, and }) =>
      or(
        claimed.map((delivery) =>
          and([eb('deliveries.project_id', '=', delivery.projectId), eb('deliveries.id', '=', delivery.id)]),
        ),
      ),
    )
    .execute();
  for (const row of rows) {
    loaded.set(row.delivery_id, {
      payload: row.payload,
      projectId: row.project_id,
      wrappedDataKey: row.wrapped_data_key,
      channel:
        row.channel_id === null || row.url === null || row.sealed_secret === null
          ? undefined
          : {
              id: row.channel_id,
              url: row.url,
              enabled: row.enabled === true,
              sealed_secret: row.sealed_secret,
              sealed_previous_secret: row.sealed_previous_secret,
              previous_secret_expires_at: row.previous_secret_expires_at,
            },
    });
  }
  return loaded;
}

/** An attempt made, to be recorded by {@link recordAttempts}. */
export interface AttemptRecord {
  delivery: ClaimedDelivery;
  startedAt: number;
  finishedAt: number;
  result: WebhookResult;
  status: DeliveryStatus;
  next: number | undefined;
}

/**
 * Makes one attempt of a claimed delivery: signs the event's envelope afresh (new `t`, every
 * active secret of the channel) and POSTs it with the PROTOCOL.md §6 headers within the timeout.
 * Decides the delivery's next state, for {@link recordAttempts}:
 *
 * - 2xx → `delivered`;
 * - refused destination (private, loopback, link-local or metadata address, not allow-listed) →
 *   `failed` at once: retrying would only probe it again (replay after fixing the URL or the
 *   allow-list);
 * - any other failure → due again per {@link nextAttemptAt}, or `failed` after the sixth.
 *
 * A delivery whose channel was deleted or disabled fails without a request.
 */
export async function sendDelivery(
  dependencies: Pick<DeliveryDependencies, 'masterKey' | 'policy'>,
  delivery: ClaimedDelivery,
  loaded: LoadedDelivery | undefined,
  options: { now: () => number; timeoutMs: number; random?: () => number },
): Promise<AttemptRecord> {
  const startedAt = options.now();
  let result: WebhookResult;
  if (loaded === undefined) {
    result = { outcome: 'refused', durationMs: 0, error: 'The event of this delivery no longer exists' };
  } else if (loaded.channel === undefined) {
    result = { outcome: 'refused', durationMs: 0, error: 'The channel was deleted' };
  } else if (!loaded.channel.enabled) {
    result = { outcome: 'refused', durationMs: 0, error: 'The channel is disabled' };
  } else {
    const secrets = activeSecrets(
      dependencies.masterKey,
      { id: loaded.projectId, wrapped_data_key: loaded.wrappedDataKey },
      loaded.channel,
      startedAt,
    );
    // Signed with the wall clock: receivers check `t` against theirs (300 s).
    const signature = await signWebhook(loaded.payload, secrets);
    result = await postWebhook({
      url: loaded.channel.url,
      body: loaded.payload,
      headers: {
        'Content-Type': 'application/json',
        'X-Service-Signature': signature,
        'X-Service-Event-Id': delivery.eventId,
        'X-Service-Delivery-Id': delivery.id,
        'X-Service-Attempt': String(delivery.attempt),
      },
      timeoutMs: options.timeoutMs,
      policy: dependencies.policy,
    });
  }
  const finishedAt = options.now();
  const next =
    result.outcome === 'failed'
      ? nextAttemptAt(delivery.attempt, {
          queuedAt: delivery.queuedAt,
          now: finishedAt,
          retryAfterMs: result.retryAfterMs,
          ...(options.random === undefined ? {} : { random: options.random }),
        })
      : undefined;
  const status: DeliveryStatus =
    result.outcome === 'delivered' ? 'delivered' : next === undefined ? 'failed' : 'pending';
  return { delivery, startedAt, finishedAt, result, status, next };
}

/**
 * Records attempts and their deliveries' new states, in one transaction of two statements
 * whatever their number. A delivery is updated only while the claim that made the attempt stands
 * (a later claim has a higher attempt count); its attempt is recorded either way.
 */
export async function recordAttempts(
  database: Kysely<Database>,
  records: readonly AttemptRecord[],
): Promise<void> {
  if (records.length === 0) return;
  const states = records.map(({ delivery, result, status, next, finishedAt }) => ({
    project_id: delivery.projectId,
    id: delivery.id,
    attempt: delivery.attempt,
    status,
    last_status: result.status ?? null,
    last_error: result.error ?? null,
    due_at: new Date(next ?? finishedAt).toISOString(),
    delivered_at: status === 'delivered' ? new Date(finishedAt).toISOString() : null,
  }));
  await database.transaction().execute(async (transaction) => {
    await transaction
      .insertInto('delivery_attempts')
      .values(
        records.map(({ delivery, result, startedAt }) => ({
          project_id: delivery.projectId,
          delivery_id: delivery.id,
          attempt: delivery.attempt,
          started_at: new Date(startedAt),
          duration_ms: Math.max(0, Math.round(result.durationMs)),
          outcome: result.outcome,
          status_code: result.status ?? null,
          response_body: result.responseBody ?? null,
          error: result.error ?? null,
        })),
      )
      .execute();
    await sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(states)}::jsonb) as input (
          project_id text, id text, attempt integer, status text, last_status integer,
          last_error text, due_at timestamptz, delivered_at timestamptz
        )
      )
      update deliveries set
        status = input.status, locked_until = null, last_status = input.last_status,
        last_error = input.last_error, due_at = input.due_at,
        delivered_at = coalesce(input.delivered_at, deliveries.delivered_at), updated_at = now()
      from input
      where deliveries.project_id = input.project_id and deliveries.id = input.id
        and deliveries.attempts = input.attempt`.execute(transaction);
  });
}

/** The outcome of a recorded attempt, as the worker counts it. */
export function attemptResult(record: AttemptRecord): AttemptResult {
  const { result, status, next } = record;
  return {
    outcome: result.outcome,
    status,
    ...(result.status === undefined ? {} : { statusCode: result.status }),
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(next === undefined ? {} : { nextAttemptAt: next }),
  };
}

/**
 * Queues a delivery again as a new delivery (`dlv_`) of the same event to the same channel, due
 * now: the receiver gets the same `evt_` id. Returns the new delivery's id, or undefined when
 * the delivery is not the project's.
 */
export async function replayDelivery(
  database: Kysely<Database>,
  projectId: string,
  deliveryId: string,
  newId: string,
  now: Date,
): Promise<string | undefined> {
  const { rows } = await sql<{ id: string }>`
    insert into deliveries (project_id, id, event_id, event_type, channel_id, due_at, replay_of)
    select project_id, ${newId}, event_id, event_type, channel_id, ${now}, id from deliveries
    where project_id = ${projectId} and id = ${deliveryId}
    returning id`.execute(database);
  return rows[0]?.id;
}

/**
 * Frees every delivery lease: only for a process that knows no other process delivers (the
 * embedded store is one process), at start, so deliveries cut off by a crash go again at once
 * instead of after their lease.
 */
export async function releaseDeliveryLeases(database: Kysely<Database>): Promise<number> {
  const result = await database
    .updateTable('deliveries')
    .set({ locked_until: null })
    .where('status', '=', 'pending')
    .where('locked_until', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
