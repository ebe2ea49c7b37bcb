import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api } from '../api.ts';
import type { ShareCreated } from '../replay/types.ts';
import { formatClock, formatDateTime } from '../ui/format.ts';
import { ErrorText } from '../ui/status.tsx';

const EXPIRIES: [number, string][] = [
  [1, '1 hour'],
  [24, '1 day'],
  [168, '7 days'],
  [720, '30 days'],
];

/**
 * "Share": a public, read-only link to the session that expires (`POST /v1/sessions/{id}/share`,
 * which needs `sessions:write`: members, admins and owners). The URL is shown once, with a copy
 * button: only its hash is stored.
 */
export function ShareSession({ sessionId, offset }: { sessionId: string; offset: number }) {
  const [open, setOpen] = useState(false);
  const [hours, setHours] = useState(24);
  const [copied, setCopied] = useState(false);
  /** Where the link opens: the time the player showed when the link was created, if asked. */
  const [startAt, setStartAt] = useState<number | undefined>();
  const [fromCurrentTime, setFromCurrentTime] = useState(false);
  const [skipInactivity, setSkipInactivity] = useState(true);
  const titleId = useId();
  const share = useMutation({
    mutationFn: () => api<ShareCreated>('POST', `/v1/sessions/${sessionId}/share`, { expiresInHours: hours }),
  });

  // The link's options are its query string: the same token opens at a time, or without skipping.
  let link: string | undefined;
  if (share.data !== undefined) {
    const url = new URL(share.data.url);
    if (fromCurrentTime && startAt !== undefined) url.searchParams.set('t', String(startAt));
    if (!skipInactivity) url.searchParams.set('skipInactivity', '0');
    link = url.toString();
  }

  async function copy(url: string) {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  }

  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Share
      </button>
    );
  return (
    <section className="share-panel" aria-labelledby={titleId}>
      <h2 id={titleId}>Share this session</h2>
      <p>Anyone with the link can watch this replay, without signing in, until it expires.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setCopied(false);
          setStartAt(Math.round(offset));
          share.mutate();
        }}
      >
        <label>
          Expires after
          <select value={String(hours)} onChange={(event) => setHours(Number(event.target.value))}>
            {EXPIRIES.map(([value, label]) => (
              <option key={value} value={String(value)}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          <input
            type="checkbox"
            checked={fromCurrentTime}
            onChange={(event) => setFromCurrentTime(event.target.checked)}
          />
          Start at {formatClock(startAt ?? offset)}
        </label>
        <label className="inline">
          <input
            type="checkbox"
            checked={skipInactivity}
            onChange={(event) => setSkipInactivity(event.target.checked)}
          />
          Skip inactivity
        </label>
        <button type="submit" disabled={share.isPending}>
          Create link
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </form>
      {share.error ? <ErrorText>{share.error.message}</ErrorText> : null}
      {link === undefined || share.data === undefined ? null : (
        <div className="share-result">
          <label>
            Share link
            <input readOnly value={link} onFocus={(event) => event.target.select()} />
          </label>
          <button type="button" onClick={() => copy(link)}>
            Copy link
          </button>
          <p role="status">
            {copied ? 'Copied. ' : ''}Expires {formatDateTime(share.data.expiresAt)}.
          </p>
        </div>
      )}
    </section>
  );
}
