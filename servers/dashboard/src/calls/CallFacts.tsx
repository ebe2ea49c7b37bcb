import type { ReactNode } from 'react';
import { formatDuration } from '../ui/format.ts';
import type { CallSummary } from './types.ts';

/** `Chrome 156.0.0.0`, or nothing. */
export function nameAndVersion(value: { name: string; version?: string } | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value.version === undefined || value.version === 'unknown'
    ? value.name
    : `${value.name} ${value.version}`;
}

/** Connected, failed to connect (and why), or not connected (yet). */
export function connectionOutcome(call: CallSummary): string {
  if (call.failedToConnect)
    return `Failed to connect${call.failureReason === undefined ? '' : ` (${call.failureReason})`}`;
  return call.connected ? 'Connected' : 'Not connected';
}

/** The call's facts as a description list: what was measured, the path, who and where. */
export function CallFacts({ call }: { call: CallSummary }) {
  const facts: Array<[string, ReactNode]> = [
    ['Quality score', call.qualityScore === undefined ? 'not scored' : `${call.qualityScore} / 100`],
    ['Connection', connectionOutcome(call)],
    ['Setup time', call.setupMs === undefined ? '—' : `${call.setupMs} ms`],
    ['Duration', call.durationMs === undefined ? '—' : formatDuration(call.durationMs)],
    ['State', call.state === 'open' ? 'open' : `closed${call.endReason === 'inactive' ? ' (inactive)' : ''}`],
    ['Path', call.relayed ? 'relayed through TURN' : 'direct'],
    [
      'Candidate types',
      `local ${call.candidateTypes.local.join(', ') || '—'}; remote ${call.candidateTypes.remote.join(', ') || '—'}`,
    ],
    ['Protocol', call.protocol ?? '—'],
    ['Network', call.networkType ?? '—'],
    ['Codecs', call.codecs.join(', ') || '—'],
    ['Samples', `${call.sampleCount} from ${call.trackCount} ${call.trackCount === 1 ? 'track' : 'tracks'}`],
    ['Browser', nameAndVersion(call.browser) ?? '—'],
    ['OS', nameAndVersion(call.os) ?? '—'],
    ['Device', call.device ?? '—'],
    ['Release', call.release ?? '—'],
    ['Environment', call.environment ?? '—'],
    ['End user', call.endUser ?? '—'],
    ['Peer connection', <code key="pc">{call.pc}</code>],
  ];
  return (
    <dl className="call-facts">
      {facts.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
