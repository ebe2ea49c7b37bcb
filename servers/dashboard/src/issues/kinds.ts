// The kinds of issue clusters the API knows (`CLUSTER_KINDS` of servers/api: the detector kinds
// of @svc/detectors, and `error`), with the words the app shows for them.

import { DETECTOR_KINDS } from '../ui/detector-kinds.ts';

export const ISSUE_KINDS: Readonly<Record<string, string>> = { error: 'Browser error', ...DETECTOR_KINDS };

/** The words for a kind (the kind itself when the app does not know it yet). */
export function kindLabel(kind: string): string {
  return ISSUE_KINDS[kind] ?? kind;
}

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
