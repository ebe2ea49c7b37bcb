import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { useParams, useSearchParams } from 'react-router';
import type { SessionAsset } from '../replay/archived-assets.ts';
import { LazyPlayer as Player } from '../replay/LazyPlayer.tsx';
import { replayParameters } from '../replay/parameters.ts';
import type { SharedSession, StoredChunk } from '../replay/types.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { ErrorText } from '../ui/status.tsx';
import './share.css';

/** A share route's answer other than 2xx. */
class ShareFailure extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * The share routes (`GET /share/{token}`, `/share/{token}/chunks/{seq}`): public, no cookie, no
 * CSRF, no project header; `Accept: application/json` (the same URL answers a browser's
 * navigation with this page).
 */
async function shareGet<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: 'application/json' }, credentials: 'omit' });
  if (!response.ok) {
    const failure = (await response.json().catch(() => ({}))) as { error?: string };
    throw new ShareFailure(response.status, failure.error ?? response.statusText);
  }
  return (await response.json()) as T;
}

/** `/share/:token`: a shared session's replay, public and read-only, until the link expires. */
export function SharePage() {
  const { token = '' } = useParams();
  const [params] = useSearchParams();
  const { offset, skipInactive } = replayParameters(params);
  const base = `/share/${encodeURIComponent(token)}`;
  const shared = useQuery({
    queryKey: ['share', token],
    queryFn: () => shareGet<SharedSession>(base),
  });
  const loadChunk = useCallback((seq: number) => shareGet<StoredChunk>(`${base}/chunks/${seq}`), [base]);
  const archivedAssets = useMemo(
    () => ({
      map: async () => (await shareGet<{ assets: SessionAsset[] }>(`${base}/assets`)).assets,
      fetch: (archivedUrl: string) => fetch(archivedUrl, { credentials: 'omit' }),
    }),
    [base],
  );

  return (
    <>
      <header className="app-header">
        <span className="brand">svc</span>
        <span>Shared session replay</span>
      </header>
      <main className="share-page">
        {shared.isPending ? <p aria-busy="true">Loading…</p> : null}
        {shared.error instanceof ShareFailure && shared.error.status === 404 ? (
          <section aria-labelledby="share-title">
            <h1 id="share-title">Shared session</h1>
            <p className="share-gone" role="alert">
              This link has expired or does not exist.
            </p>
            <p>Ask whoever sent it for a new link.</p>
          </section>
        ) : shared.error ? (
          <ErrorText>{shared.error.message}</ErrorText>
        ) : null}
        {shared.data === undefined ? null : (
          <section aria-labelledby="share-title">
            <h1 id="share-title">
              Shared session{shared.data.url === undefined ? '' : ` on ${shared.data.url}`}
            </h1>
            <p className="session-facts">
              {formatDateTime(shared.data.startedAt)} · {formatDuration(shared.data.durationMs)}
              {shared.data.browser === undefined
                ? ''
                : ` · ${shared.data.browser.name} ${shared.data.browser.version}`}{' '}
              · link expires {formatDateTime(shared.data.share.expiresAt)}
            </p>
            {shared.data.chunks.length === 0 ? (
              <p>Nothing of this session has been recorded yet.</p>
            ) : (
              <Player
                detail={shared.data}
                loadChunk={loadChunk}
                archivedAssets={archivedAssets}
                initialOffset={offset}
                skipInactive={skipInactive}
              />
            )}
          </section>
        )}
      </main>
    </>
  );
}
