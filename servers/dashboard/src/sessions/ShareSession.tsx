import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api } from '../api.ts';
import type { ShareCreated } from '../replay/types.ts';
import { formatDateTime } from '../ui/format.ts';
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
export function ShareSession({ sessionId }: { sessionId: string }) {
  const [open, setOpen] = useState(false);
  const [hours, setHours] = useState(24);
  const [copied, setCopied] = useState(false);
  const titleId = useId();
  const share = useMutation({
    mutationFn: () => api<ShareCreated>('POST', `/v1/sessions/${sessionId}/share`, { expiresInHours: hours }),
  });

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
        <button type="submit" disabled={share.isPending}>
          Create link
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </form>
      {share.error ? <ErrorText>{share.error.message}</ErrorText> : null}
      {share.data === undefined ? null : (
        <div className="share-result">
          <label>
            Share link
            <input readOnly value={share.data.url} onFocus={(event) => event.target.select()} />
          </label>
          <button type="button" onClick={() => share.data && copy(share.data.url)}>
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
