import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { BlobStore } from '../../platform/blob-store/index.ts';
import type { MasterKey } from '../../platform/crypto/index.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { AssetKind, NewSessionAsset } from '../../platform/database/tables/assets.table.ts';
import type { DestinationPolicy } from '../../platform/http/destination-policy.ts';
import { runConcurrently } from '../../platform/jobs/polling-loop.ts';
import { readSettingsText } from '../projects/index.ts';
import { chunkEvents, readChunkBytes } from '../sessions/index.ts';
import { fetchAsset } from './fetch-asset.ts';
import { type AssetReference, cssReferences, eventReferences } from './references.ts';
import {
  assetBlobKey,
  consumedSeq,
  contentKnown,
  linkSessionAssets,
  recentFetch,
  saveConsumedSeq,
  saveFetch,
} from './repository.ts';

/** What archiving needs from the process. */
export interface AssetDependencies {
  database: Kysely<Database>;
  blobStore: BlobStore;
  masterKey: MasterKey;
  log: FastifyBaseLogger;
  /** Where assets may be fetched from: the webhooks' policy (tests allow 127.0.0.1 through it). */
  policy: DestinationPolicy;
  /** Bounds each fetch. Default 10 s. */
  timeoutMs?: number;
  /** How long a URL's fetch (or failure) is reused before the URL is fetched again. Default 24 h. */
  reuseMs?: number;
}

/** What one run archived. */
export interface ArchiveResult {
  chunksRead: number;
  /** URLs the session referenced that were new to it (its snapshots', and the stylesheets'). */
  references: number;
  /** Fetched now and archived. */
  fetched: number;
  /** Taken from a fetch of the same URL within `reuseMs`. */
  reused: number;
  /** Failed or refused now (recorded; not fetched again within `reuseMs`). */
  failed: number;
}

/** URLs a session archives at most (its snapshots' and its stylesheets' together). */
const MAX_SESSION_ASSETS = 300;
/** How deep `@import`s are followed from a snapshot's stylesheet. */
const MAX_IMPORT_DEPTH = 3;
/** Fetches at once for one session. */
const FETCH_CONCURRENCY = 4;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The outcome for one URL, as linked to the session. */
interface Archived {
  status: NewSessionAsset['status'];
  sha256: string | null;
  content_type: string | null;
  bytes: number | null;
  error: string | null;
  fetched_at: Date;
  /** The stylesheet's text, when it is one that was archived (its references are followed). */
  css?: string;
}

/**
 * Archives what a session's snapshots reference (servers/api/README.md, Archived assets): reads
 * the chunks after the last one read (`asset_progress`), collects the stylesheets of its rrweb
 * full snapshots (`<link rel=stylesheet>`, inline styles' `@import`), and by the project's
 * settings its fonts (`assets.archiveFonts`) and images (`assets.archiveImages`), follows the
 * archived stylesheets' `@import`s and `url()`s, and for each URL of one of the project's
 * `allowedOrigins` (none listed: nothing is fetched) fetches it through `policy` (timeout, size
 * limit while streaming, content type) unless it was fetched within `reuseMs`. Each distinct
 * content is stored once per project, under its SHA-256; the session is linked to what each URL
 * was archived as, or why it was not. Idempotent: a second run reads only newer chunks, and a
 * URL the session already has keeps its first outcome.
 *
 * @example
 * ```ts
 * const result = await archiveSessionAssets({ database, blobStore, masterKey, log, policy }, project.id, sessionId);
 * result.fetched; // 1
 * ```
 */
export async function archiveSessionAssets(
  dependencies: AssetDependencies,
  projectId: string,
  sessionId: string,
  now: Date = new Date(),
): Promise<ArchiveResult> {
  const { database } = dependencies;
  const result: ArchiveResult = { chunksRead: 0, references: 0, fetched: 0, reused: 0, failed: 0 };
  const project = await database
    .selectFrom('projects')
    .select(['id', 'wrapped_data_key', sql<string | null>`settings::text`.as('settings')])
    .where('id', '=', projectId)
    .executeTakeFirst();
  if (project === undefined) return result;
  const settings = readSettingsText(project.settings);
  const watermark = await consumedSeq(database, projectId, sessionId);
  const chunks = await database
    .selectFrom('chunks')
    .select(['seq', 'blob_key'])
    .where('project_id', '=', projectId)
    .where('session_id', '=', sessionId)
    .where('seq', '>', watermark)
    .orderBy('seq')
    .execute();
  if (chunks.length === 0) return result;

  const wanted = (kind: AssetKind) =>
    kind === 'stylesheet' ||
    (kind === 'font' && settings.assets.archiveFonts) ||
    (kind === 'image' && settings.assets.archiveImages);
  const known = new Set(
    (
      await database
        .selectFrom('session_assets')
        .select('url')
        .where('project_id', '=', projectId)
        .where('session_id', '=', sessionId)
        .execute()
    ).map((row) => row.url),
  );
  let room = MAX_SESSION_ASSETS - known.size;
  const take = (references: readonly AssetReference[]) =>
    references.filter((reference) => {
      if (room <= 0 || known.has(reference.url) || !wanted(reference.kind)) return false;
      known.add(reference.url);
      room -= 1;
      return true;
    });

  let level: AssetReference[] = [];
  for (const chunk of chunks) {
    const place = { session_id: sessionId, seq: chunk.seq };
    const bytes = await readChunkBytes(dependencies, dependencies.log, project, {
      ...place,
      blob_key: chunk.blob_key,
    });
    level.push(...take(eventReferences(chunkEvents(bytes, place))));
    result.chunksRead += 1;
  }

  const allowed = new Set(settings.allowedOrigins);
  for (let depth = 0; level.length > 0 && depth <= MAX_IMPORT_DEPTH; depth++) {
    const rows: NewSessionAsset[] = [];
    const next: AssetReference[] = [];
    await runConcurrently(level, FETCH_CONCURRENCY, async (reference) => {
      const archived = await archiveUrl(dependencies, projectId, reference, allowed, now, result);
      result.references += 1;
      const { css, ...row } = archived;
      rows.push({
        project_id: projectId,
        session_id: sessionId,
        url: reference.url,
        kind: reference.kind,
        ...row,
      });
      if (css !== undefined && depth < MAX_IMPORT_DEPTH) next.push(...cssReferences(css, reference.url));
    });
    await linkSessionAssets(database, rows);
    level = take(next);
  }
  await saveConsumedSeq(database, projectId, sessionId, chunks.at(-1)?.seq ?? watermark);
  return result;
}

/** One URL: reused from a recent fetch, refused, or fetched and stored. */
async function archiveUrl(
  dependencies: AssetDependencies,
  projectId: string,
  reference: AssetReference,
  allowed: ReadonlySet<string>,
  now: Date,
  result: ArchiveResult,
): Promise<Archived> {
  const { database, blobStore } = dependencies;
  const { url, kind } = reference;
  const origin = new URL(url).origin;
  if (!allowed.has(origin)) {
    result.failed += 1;
    return {
      status: 'refused',
      sha256: null,
      content_type: null,
      bytes: null,
      error: `${origin} is not one of the project's allowed origins`,
      fetched_at: now,
    };
  }
  const since = new Date(now.getTime() - (dependencies.reuseMs ?? DAY_MS));
  const recent = await recentFetch(database, projectId, url, since);
  if (recent !== undefined) {
    const stored =
      recent.status === 'archived' && recent.sha256 !== null && kind === 'stylesheet'
        ? await blobStore.get(assetBlobKey(projectId, recent.sha256))
        : null;
    if (recent.status === 'archived' && recent.sha256 !== null) result.reused += 1;
    else result.failed += 1;
    return {
      status: recent.status,
      sha256: recent.sha256,
      content_type: recent.content_type,
      bytes: recent.bytes,
      error: recent.error,
      fetched_at: recent.fetched_at,
      ...(stored === null ? {} : { css: Buffer.from(stored).toString('utf8') }),
    };
  }
  const fetched = await fetchAsset({
    url,
    kind,
    policy: dependencies.policy,
    timeoutMs: dependencies.timeoutMs ?? 10_000,
  });
  if (!fetched.success) {
    result.failed += 1;
    const failure = {
      status: fetched.refused ? ('refused' as const) : ('failed' as const),
      sha256: null,
      content_type: null,
      bytes: null,
      error: fetched.error,
      fetched_at: now,
    };
    await saveFetch(database, projectId, { url, ...failure });
    return failure;
  }
  if (!(await contentKnown(database, projectId, fetched.sha256)))
    await blobStore.put(assetBlobKey(projectId, fetched.sha256), fetched.bytes);
  const archived = {
    status: 'archived' as const,
    sha256: fetched.sha256,
    content_type: fetched.contentType,
    bytes: fetched.bytes.length,
    error: null,
    fetched_at: now,
  };
  await saveFetch(database, projectId, { url, ...archived });
  result.fetched += 1;
  return kind === 'stylesheet' ? { ...archived, css: fetched.bytes.toString('utf8') } : archived;
}
