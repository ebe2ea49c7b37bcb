import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { ApiFailure, api, apiGetRaw, type Page } from '../api.ts';
import { StackTrace } from '../issues/StackTrace.tsx';
import type { StackFrame } from '../issues/types.ts';
import type { SessionAsset } from '../replay/archived-assets.ts';
import { LazyPlayer as Player } from '../replay/LazyPlayer.tsx';
import { replayParameters } from '../replay/parameters.ts';
import {
  MARKED_EVENT_TYPES,
  type Marker,
  markersOfEvents,
  markersOfFindings,
  mergeMarkers,
} from '../replay/timeline.ts';
import type { FlatEvent, SessionDetail, SessionIssue, StoredChunk } from '../replay/types.ts';
import { formatDateTime, formatDuration } from '../ui/format.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { useWorkspace } from '../ui/workspace.tsx';
import { findSessionProject } from './find-session.ts';
import { NetworkPanel } from './NetworkPanel.tsx';
import { requestsOf } from './network.ts';
import { SessionAnalysis } from './SessionAnalysis.tsx';
import { ShareSession } from './ShareSession.tsx';
import './session.css';

/** At most this many pages of events are read for the markers (each opens a few chunks). */
const MAX_EVENT_PAGES = 100;

/** Every page of a list route, following `nextCursor`. */
async function allPages<T>(path: string, maxPages: number): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const separator = path.includes('?') ? '&' : '?';
    const answer = await api<Page<T>>(
      'GET',
      cursor === undefined ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`,
    );
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (cursor === undefined) break;
  }
  return items;
}

/** An error's stack as the issues route gives it: as printed, and its frames once symbolicated. */
interface ErrorStack {
  stack?: string;
  frames?: StackFrame[];
}

/** The stacks of the session's errors by their place (`seq:index`, the markers' keys). */
function errorStacksOf(issues: SessionIssue[]): Map<string, ErrorStack> {
  const stacks = new Map<string, ErrorStack>();
  for (const issue of issues) {
    if (issue.kind !== 'error' || issue.seq === undefined || issue.index === undefined) continue;
    const { stack, frames } = issue.details;
    stacks.set(`${issue.seq}:${issue.index}`, {
      stack: typeof stack === 'string' ? stack : undefined,
      frames: Array.isArray(frames) ? (frames as StackFrame[]) : undefined,
    });
  }
  return stacks;
}

/** Under an error of the event list: its stack, closed until asked for. */
function ErrorStackDetails({ marker, stack }: { marker: Marker; stack: ErrorStack }) {
  const mapped = stack.frames?.some((frame) => frame.mapped) === true;
  return (
    <details className="event-stack">
      <summary>Stack{mapped ? ', original frames from the source map' : ''}</summary>
      <StackTrace stack={stack.stack} frames={stack.frames} label={`Frames of ${marker.label}`} />
    </details>
  );
}

/**
 * `/sessions/:id`: the session's replay, its markers and events, sharing it, and under the player
 * its analysis (explanation, transcript, reproduction) and network panel.
 */
export function SessionPage() {
  const { id = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const { organization, project } = useWorkspace();
  const { offset, skipInactive } = replayParameters(params);
  const detail = useQuery({
    queryKey: ['session', project.id, id],
    queryFn: () => api<SessionDetail>('GET', `/v1/sessions/${encodeURIComponent(id)}`),
  });
  // A link without `?project=` (a webhook's) to a session of another project: find it there.
  const elsewhere = useQuery({
    queryKey: ['session-project', project.id, id],
    enabled: detail.error instanceof ApiFailure && detail.error.status === 404 && !params.has('project'),
    queryFn: () => findSessionProject(id, project.id),
  });
  const found = elsewhere.data;
  useEffect(() => {
    if (found === undefined) return;
    const next = new URLSearchParams(params);
    next.set('org', found.org);
    next.set('project', found.project);
    setParams(next, { replace: true });
  }, [found, params, setParams]);
  const start = detail.data === undefined ? 0 : Date.parse(detail.data.startedAt);
  // The markers' requests read every chunk on the server: they wait for the first frame, so a
  // long session's first chunks do not queue behind them.
  const [playerSettled, setPlayerSettled] = useState(false);
  const onSettled = useCallback(() => setPlayerSettled(true), []);
  const markers = useQuery({
    queryKey: ['session-markers', project.id, id],
    enabled: detail.data !== undefined && (playerSettled || detail.data.chunks.length === 0),
    queryFn: async () => {
      const [events, issues] = await Promise.all([
        allPages<FlatEvent>(
          `/v1/sessions/${encodeURIComponent(id)}/events?types=${MARKED_EVENT_TYPES.join(',')}&limit=1000`,
          MAX_EVENT_PAGES,
        ),
        api<Page<SessionIssue>>('GET', `/v1/sessions/${encodeURIComponent(id)}/issues?limit=1000`),
      ]);
      return {
        markers: mergeMarkers(markersOfEvents(events, start), markersOfFindings(issues.items, start)),
        requests: requestsOf(events, start),
        errorStacks: errorStacksOf(issues.items),
      };
    },
  });
  const requests = markers.data?.requests;
  const errorStacks = markers.data?.errorStacks;
  const eventDetails = useCallback(
    (marker: Marker) => {
      const stack = marker.kind === 'error' ? errorStacks?.get(marker.key) : undefined;
      if (stack === undefined || (stack.stack === undefined && stack.frames === undefined)) return null;
      return <ErrorStackDetails marker={marker} stack={stack} />;
    },
    [errorStacks],
  );
  const loadChunk = useCallback(
    (seq: number) => api<StoredChunk>('GET', `/v1/sessions/${encodeURIComponent(id)}/chunks/${seq}`),
    [id],
  );
  const archivedAssets = useMemo(
    () => ({
      map: async () =>
        (await api<{ assets: SessionAsset[] }>('GET', `/v1/sessions/${encodeURIComponent(id)}/assets`))
          .assets,
      fetch: apiGetRaw,
    }),
    [id],
  );
  // Sharing creates a link: sessions:write, which viewers do not have.
  const maySharePublicly = organization.role !== 'viewer';

  return (
    <section aria-labelledby="session-title" className="session-page">
      <p>
        <AppLink to="/sessions">← Sessions</AppLink>
      </p>
      {elsewhere.fetchStatus === 'fetching' || found !== undefined ? (
        <p aria-busy="true">Looking for this session in your other projects…</p>
      ) : (
        <QueryState query={detail}>
          {(session) => (
            <>
              <h1 id="session-title">
                Session {session.url === undefined ? session.id : `on ${session.url}`}
              </h1>
              <p className="session-facts">
                {formatDateTime(session.startedAt)} · {formatDuration(session.durationMs)}
                {session.browser === undefined ? '' : ` · ${session.browser.name} ${session.browser.version}`}
                {session.os === undefined ? '' : ` · ${session.os.name} ${session.os.version}`}
                {session.user === undefined
                  ? ''
                  : ` · ${session.user.name ?? session.user.email ?? session.user.id}`}
                {session.release === undefined ? '' : ` · release ${session.release}`} ·{' '}
                {session.errorCount === 1 ? '1 error' : `${session.errorCount} errors`}
              </p>
              {session.chunks.length === 0 ? (
                <p>Nothing of this session has been recorded yet.</p>
              ) : (
                <Player
                  detail={session}
                  loadChunk={loadChunk}
                  archivedAssets={archivedAssets}
                  markers={markers.data?.markers}
                  initialOffset={offset}
                  skipInactive={skipInactive}
                  onSettled={onSettled}
                  eventDetails={eventDetails}
                  panels={(playback) => (
                    <>
                      <SessionAnalysis sessionId={session.id} seek={playback.seek} />
                      <NetworkPanel sessionId={session.id} requests={requests} playback={playback} />
                    </>
                  )}
                  actions={
                    maySharePublicly
                      ? (offset) => <ShareSession sessionId={session.id} offset={offset} />
                      : undefined
                  }
                />
              )}
            </>
          )}
        </QueryState>
      )}
    </section>
  );
}
