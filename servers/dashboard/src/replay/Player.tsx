import '@rrweb/replay/dist/style.css';
import './replay.css';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { formatClock, formatDuration } from '../ui/format.ts';
import { archivingLoader, loadArchivedAssets, type SessionAsset } from './archived-assets.ts';
import { type PlayerState, ReplayController, SPEEDS } from './controller.ts';
import { currentMarker, gapsOf, MARKER_NAMES, type Marker, markerOf, mergeMarkers } from './timeline.ts';
import type { SessionDetail, StoredChunk } from './types.ts';

export interface PlayerProps {
  detail: SessionDetail;
  loadChunk(seq: number): Promise<StoredChunk>;
  /** Markers known before any chunk is loaded (the events and issues routes). */
  markers?: Marker[];
  /** Where to open, in ms from the session's start (`?t=`). */
  initialOffset?: number;
  /** "Skip inactivity" when the player opens (on unless the link says `skipInactivity=0`). */
  skipInactive?: boolean;
  /** Once: the first frame is shown (or could not be). The session page loads its markers then. */
  onSettled?(): void;
  /** More controls for the toolbar (the session page's Share button), given the current offset. */
  actions?: (offset: number) => ReactNode;
  /**
   * Parts shown under the player that follow playback and seek it (the session page's network
   * panel), given the current offset and a way to move there.
   */
  panels?: (playback: Playback) => ReactNode;
  /**
   * The session's archived assets: its asset map, and how an archived URL is fetched. The
   * snapshots are replayed with them in place of the site's current files.
   */
  archivedAssets?: {
    map(): Promise<SessionAsset[]>;
    fetch(archivedUrl: string): Promise<Response>;
  };
  /** More about an entry of the event list, shown under it (the session page's error stacks). */
  eventDetails?: (marker: Marker) => ReactNode;
}

/** What a panel under the player gets: where playback is and how to move it. */
export interface Playback {
  /** Milliseconds from the session's start. */
  offset: number;
  /** Moves playback to `offset` (ms from the session's start), playing on if it played. */
  seek(offset: number): void;
}

const NO_MARKERS: Marker[] = [];
/** ← and → move this much. */
const STEP_MS = 5_000;

const percent = (offset: number, duration: number) =>
  `${duration <= 0 ? 0 : Math.min(100, Math.max(0, (offset / duration) * 100))}%`;

/**
 * The replay player: rrweb's Replayer under our controls (play, pause, speed, skip inactivity), a
 * timeline with the session's markers and gaps, and the event list that follows playback.
 */
export function Player({
  detail,
  loadChunk,
  markers = NO_MARKERS,
  initialOffset = 0,
  skipInactive = true,
  actions,
  panels,
  eventDetails,
  onSettled,
  archivedAssets,
}: PlayerProps) {
  const screen = useRef<HTMLDivElement>(null);
  const list = useRef<HTMLOListElement>(null);
  const [controller, setController] = useState<ReplayController>();
  const [state, setState] = useState<PlayerState>();
  const [chunkMarkers, setChunkMarkers] = useState<Marker[]>([]);
  const start = Date.parse(detail.startedAt);
  const duration = detail.durationMs;
  const gaps = useMemo(() => gapsOf(detail), [detail]);
  const allMarkers = useMemo(() => mergeMarkers(markers, chunkMarkers), [markers, chunkMarkers]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: one Replayer per session; the options are read once
  useEffect(() => {
    const root = screen.current;
    if (root === null) return;
    const created = new ReplayController({
      root,
      startedAt: start,
      durationMs: duration,
      chunks: detail.chunks,
      gaps,
      loadChunk:
        archivedAssets === undefined
          ? loadChunk
          : archivingLoader(loadChunk, async () =>
              loadArchivedAssets(await archivedAssets.map(), archivedAssets.fetch),
            ),
      skipInactive,
      onSettled,
      onChunk(chunk) {
        const found = chunk.events.flatMap((event, index) => markerOf(event, chunk.seq, index, start) ?? []);
        if (found.length > 0) setChunkMarkers((known) => mergeMarkers(known, found));
      },
    });
    const unsubscribe = created.subscribe(setState);
    setController(created);
    void created.seek(initialOffset, false);
    return () => {
      unsubscribe();
      created.destroy();
    };
  }, [detail.id]);

  // Keyboard, as in other players: Space plays or pauses, ← and → step 5 s (not while typing or
  // on a control, whose own keys those are).
  useEffect(() => {
    if (controller === undefined) return;
    function onKey(event: KeyboardEvent) {
      const target = event.target as HTMLElement | null;
      if (event.altKey || event.ctrlKey || event.metaKey || event.defaultPrevented) return;
      if (target?.closest('input, select, textarea, button, a, [contenteditable="true"]')) return;
      const current = controller?.currentOffset() ?? 0;
      if (event.key === ' ') {
        event.preventDefault();
        if (controller?.isPlaying()) controller.pause();
        else controller?.play();
      } else if (event.key === 'ArrowLeft') void controller?.seek(current - STEP_MS);
      else if (event.key === 'ArrowRight') void controller?.seek(current + STEP_MS);
    }
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [controller]);

  const offset = state?.offset ?? initialOffset;
  const current = currentMarker(allMarkers, offset);
  const seek = useCallback((to: number) => void controller?.seek(to), [controller]);

  // The event list follows playback: its current row stays in view (without scrolling the page).
  const currentKey = current?.key;
  useEffect(() => {
    const container = list.current;
    if (currentKey === undefined) return;
    const row = container?.querySelector<HTMLElement>(`[data-key="${currentKey}"]`);
    if (container === null || container === undefined || row === null || row === undefined) return;
    const top = row.offsetTop - container.offsetTop;
    if (top < container.scrollTop || top + row.offsetHeight > container.scrollTop + container.clientHeight)
      container.scrollTop = Math.max(0, top - container.clientHeight / 2);
  }, [currentKey]);

  return (
    <div className="player">
      <section className="player-main" aria-label="Replay">
        <div className="player-stage">
          <div ref={screen} className="player-screen" />
          {state?.loading ? (
            <p className="player-overlay" aria-busy="true">
              Loading the recording…
            </p>
          ) : null}
          {state?.error ? (
            <p className="player-overlay error" role="alert">
              {state.error}
            </p>
          ) : null}
        </div>
        <div className="player-controls">
          {state?.playing ? (
            <button type="button" onClick={() => controller?.pause()}>
              Pause
            </button>
          ) : (
            <button type="button" onClick={() => controller?.play()} disabled={controller === undefined}>
              Play
            </button>
          )}
          <span className="player-time">
            <output aria-label="Current time" data-offset-ms={Math.round(offset)}>
              {formatClock(offset)}
            </output>{' '}
            / <span>{formatClock(duration)}</span>
          </span>
          <label className="inline">
            Speed
            <select
              value={String(state?.speed ?? 1)}
              onChange={(event) => controller?.setSpeed(Number(event.target.value))}
            >
              {SPEEDS.map((speed) => (
                <option key={speed} value={String(speed)}>
                  {speed}×
                </option>
              ))}
            </select>
          </label>
          <label className="inline">
            <input
              type="checkbox"
              checked={state?.skipInactive ?? skipInactive}
              onChange={(event) => controller?.setSkipInactive(event.target.checked)}
            />
            Skip inactivity
          </label>
          {actions?.(offset)}
        </div>
        <div className="player-timeline">
          <input
            type="range"
            aria-label="Seek"
            min={0}
            max={duration}
            step={100}
            value={Math.round(offset)}
            aria-valuetext={`${formatClock(offset)} of ${formatClock(duration)}`}
            onChange={(event) => void controller?.seek(Number(event.target.value))}
          />
          <div className="timeline-track">
            {gaps.map((gap) => (
              <span
                key={gap.key}
                className="timeline-gap"
                data-gap-from={Math.round(gap.from)}
                data-gap-to={Math.round(gap.to)}
                title={`Not recorded: ${gap.reason}`}
                style={{ left: percent(gap.from, duration), width: percent(gap.to - gap.from, duration) }}
              />
            ))}
            {allMarkers.map((marker) => (
              <button
                type="button"
                key={marker.key}
                className={`timeline-marker marker-${marker.kind}`}
                data-marker-kind={marker.kind}
                data-offset={Math.round(marker.offset)}
                title={`${MARKER_NAMES[marker.kind]} at ${formatClock(marker.offset)}: ${marker.label}`}
                aria-label={`${MARKER_NAMES[marker.kind]} at ${formatClock(marker.offset)}: ${marker.label}`}
                tabIndex={-1}
                style={{ left: percent(marker.offset, duration) }}
                onClick={() => void controller?.seek(marker.offset)}
              />
            ))}
          </div>
        </div>
        {gaps.length > 0 ? (
          <ul className="gap-list" aria-label="Not recorded">
            {gaps.map((gap) => (
              <li key={gap.key} className="gap-label" data-gap-from={Math.round(gap.from)}>
                <span className="gap-swatch" aria-hidden="true" /> {formatClock(gap.from)}–
                {formatClock(gap.to)} Not recorded: {gap.reason}
              </li>
            ))}
          </ul>
        ) : null}
        <p className="player-status" role="status">
          {state?.skipped === undefined
            ? ''
            : state.skipped.key.startsWith('inactive:')
              ? `Skipped ${formatDuration(state.skipped.to - state.skipped.from)} of inactivity`
              : `Skipped ${formatDuration(state.skipped.to - state.skipped.from)} that was not recorded: ${state.skipped.reason}`}
        </p>
      </section>
      <section className="player-events" aria-labelledby="events-title">
        <h2 id="events-title">Events</h2>
        {allMarkers.length === 0 ? <p>No events yet.</p> : null}
        <ol ref={list}>
          {allMarkers.map((marker) => (
            <li key={marker.key}>
              <button
                type="button"
                className={`event-row marker-${marker.kind}`}
                aria-current={marker.key === currentKey ? 'true' : undefined}
                data-key={marker.key}
                data-offset={Math.round(marker.offset)}
                onClick={() => void controller?.seek(marker.offset)}
              >
                <span className="event-time">{formatClock(marker.offset)}</span>
                <span className="event-kind">{MARKER_NAMES[marker.kind]}</span>
                <span className="event-label">{marker.label}</span>
              </button>
              {eventDetails?.(marker)}
            </li>
          ))}
        </ol>
      </section>
      {panels === undefined ? null : <div className="player-panels">{panels({ offset, seek })}</div>}
    </div>
  );
}
