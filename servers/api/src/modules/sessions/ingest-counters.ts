import type { DroppedField } from '@svc/protocol';
import type { PrivacyRule, Redaction } from './call-privacy.ts';

/** What ingest removed from the chunks it stored, since the process started. */
interface IngestCountersSnapshot {
  /** Chunks stored with at least one optional meta field dropped. */
  chunksWithDroppedMeta: number;
  /** Optional meta fields dropped, by path (`meta.os.version`). */
  droppedMetaFields: Record<string, number>;
  /** Chunks stored with something removed by the privacy re-check. */
  chunksRedacted: number;
  /** Values removed by the privacy re-check, by rule. */
  redacted: Partial<Record<PrivacyRule, number>>;
}

/** In-process counters of what ingest dropped and redacted (logged when the app closes). */
export interface IngestCounters {
  /** Counts one stored chunk's drops and redactions. */
  count(dropped: readonly DroppedField[], redacted: readonly Redaction[]): void;
  snapshot(): IngestCountersSnapshot;
}

/**
 * Counters of what ingest removed, like the chunk index writer's `stats()`: cheap, per process,
 * reset on restart; each stored chunk that lost something also gets its own log line.
 *
 * @example
 * ```ts
 * const counters = createIngestCounters();
 * counters.count(decoded.dropped, decoded.redacted);
 * counters.snapshot().redacted.candidate_address; // values removed so far
 * ```
 */
export function createIngestCounters(): IngestCounters {
  const totals: IngestCountersSnapshot = {
    chunksWithDroppedMeta: 0,
    droppedMetaFields: {},
    chunksRedacted: 0,
    redacted: {},
  };
  return {
    count(dropped, redacted) {
      if (dropped.length > 0) totals.chunksWithDroppedMeta += 1;
      for (const { path } of dropped)
        totals.droppedMetaFields[path] = (totals.droppedMetaFields[path] ?? 0) + 1;
      if (redacted.length > 0) totals.chunksRedacted += 1;
      for (const { rule, count } of redacted) totals.redacted[rule] = (totals.redacted[rule] ?? 0) + count;
    },
    snapshot() {
      return structuredClone(totals);
    },
  };
}
