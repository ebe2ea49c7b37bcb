import '@rrweb/replay/dist/style.css';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { api } from '../api.ts';
import { type PageLayout, ReplayController } from '../replay/controller.ts';
import { gapsOf } from '../replay/timeline.ts';
import type { SessionDetail, StoredChunk } from '../replay/types.ts';

// The heatmap's backdrop: the recorded page of a session, replayed with the player's engine
// (replay/controller.ts: the chunks around the moment, from the full snapshot before it) and
// paused at the page view's start, drawn whole (the `page` layout) so the overlay can cover it.

export interface BackdropView {
  /** The replayed document: the heatmap finds its elements there. */
  document: Document;
  layout: PageLayout;
}

/**
 * The session's page at `offsetMs`, paused, with `overlay(view)` drawn over it at the same scale
 * once the page is there (and again when it is measured anew).
 */
export function Backdrop({
  session,
  offsetMs,
  overlay,
}: {
  session: SessionDetail;
  offsetMs: number;
  overlay(view: BackdropView): ReactNode;
}) {
  const screen = useRef<HTMLDivElement>(null);
  const [view, setView] = useState<BackdropView>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const root = screen.current;
    if (root === null) return;
    let controller: ReplayController | undefined;
    const timers: ReturnType<typeof setTimeout>[] = [];
    controller = new ReplayController({
      root,
      startedAt: Date.parse(session.startedAt),
      durationMs: session.durationMs,
      chunks: session.chunks,
      gaps: gapsOf(session),
      loadChunk: (seq) =>
        api<StoredChunk>('GET', `/v1/sessions/${encodeURIComponent(session.id)}/chunks/${seq}`),
      skipInactive: false,
      layout: 'page',
      onLayout(layout) {
        const document = controller?.iframe()?.contentDocument;
        if (document !== null && document !== undefined) setView({ document, layout: { ...layout } });
      },
      onSettled() {
        // The recorded page's images and fonts may change its height: measure again a little later.
        for (const delay of [300, 1500]) timers.push(setTimeout(() => controller?.relayout(), delay));
      },
    });
    const unsubscribe = controller.subscribe((state) => setError(state.error));
    void controller.seek(offsetMs, false);
    return () => {
      for (const timer of timers) clearTimeout(timer);
      unsubscribe();
      controller?.destroy();
      controller = undefined;
    };
  }, [session, offsetMs]);

  return (
    <div className="heatmap-stage" data-backdrop-session={session.id}>
      <div ref={screen} className="heatmap-screen" />
      {view === undefined ? null : (
        <div
          className="heatmap-overlay"
          aria-hidden="true"
          data-scale={view.layout.scale}
          style={{
            width: `${view.layout.width}px`,
            height: `${view.layout.height}px`,
            transform: `scale(${view.layout.scale})`,
          }}
        >
          {overlay(view)}
        </div>
      )}
      {error === undefined ? null : (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {view === undefined && error === undefined ? <p aria-busy="true">Loading the recorded page…</p> : null}
    </div>
  );
}
