// Words the AI panels share: severities, confidences and evidence values as people read them.

import type { Cause } from './types.ts';

const SEVERITY_WORDS: Readonly<Record<string, string>> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Info',
};

/** `high` → `High`; an unknown severity as it is. */
export function severityLabel(severity: string): string {
  return SEVERITY_WORDS[severity] ?? severity;
}

/** A cause's confidence in words: `high confidence`. */
export function confidenceLabel(confidence: Cause['confidence']): string {
  return `${confidence} confidence`;
}

/** An evidence value (a number, a string, a list, an object) as one line of text. */
export function evidenceText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** `0.42` → `42%` (shares of the issue explanation). */
export function formatShare(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}
