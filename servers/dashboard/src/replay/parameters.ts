/**
 * The player's URL parameters: `?t=<ms>` opens at that offset from the session's start (the
 * webhooks' `links.replay`), `?skipInactivity=0` opens with "Skip inactivity" off.
 */
export function replayParameters(params: URLSearchParams): { offset: number; skipInactive: boolean } {
  const t = Number(params.get('t') ?? 0);
  return {
    offset: Number.isFinite(t) && t > 0 ? t : 0,
    skipInactive: !['0', 'false', 'off'].includes(params.get('skipInactivity') ?? ''),
  };
}
