import { lazy, Suspense } from 'react';
import type { PlayerProps } from './Player.tsx';

// rrweb's Replayer is most of the player's weight: it is a chunk of its own, loaded by the pages
// that replay, so signing in and the lists do not download it.
const Player = lazy(() => import('./Player.tsx').then((module) => ({ default: module.Player })));

/** {@link Player}, loaded on first use. */
export function LazyPlayer(props: PlayerProps) {
  return (
    <Suspense fallback={<p aria-busy="true">Loading the player…</p>}>
      <Player {...props} />
    </Suspense>
  );
}
