// Readable names of the detector thresholds the API lists (`GET /v1/config`: every threshold with
// the project's value). A name the dashboard does not know yet is shown as the API names it.

const LABELS: Record<string, string> = {
  connectTimeoutMs: 'Connection timeout (ms)',
  oneWayMs: 'One-way media after (ms)',
  freezeSingleMs: 'Single video freeze (ms)',
  freezeRatioPct: 'Frozen video share (%)',
  minObservedMs: 'Observed at least (ms) before ratios count',
  concealmentPct: 'Audio concealment (%)',
  concealmentSustainMs: 'Audio concealment sustained (ms)',
  reconnectCount: 'Reconnections',
  reconnectWindowMs: 'Reconnection window (ms)',
  abandonMs: 'Call abandoned within (ms)',
  abandonScore: 'Abandoned below quality score',
  lossPct: 'Packet loss (%)',
  lossSustainMs: 'Packet loss sustained (ms)',
  rttMs: 'Round-trip time (ms)',
  rttSustainMs: 'Round-trip time sustained (ms)',
  cpuLimitedPct: 'CPU-limited share (%)',
  lowResHeight: 'Low resolution below height (px)',
  lowResSustainMs: 'Low resolution sustained (ms)',
};

/** The readable label of a threshold: `lossPct` → `Packet loss (%)`. */
export function thresholdLabel(name: string): string {
  return LABELS[name] ?? name;
}
