// The page a session's rrweb events build, as the timeline names clicks and typing from it
// (elements.ts): the latest full snapshot and the mutations since, made into a mirror (insights'
// dom-mirror.ts) only when it is read. A mirror copies the page (thousands of nodes), and rrweb
// takes a full snapshot at every checkout (the browser SDK: every 30 s), most of which no click or
// typing follows before the next one; built when read, the mirror is the same as one kept up to
// date event by event (the snapshot and the mutations are read, never changed).

import { applyMutation, type DomMirror, type MirrorContent, mirrorOf } from '../insights/index.ts';

/** Mutations held for a mirror not built yet: past this many it is built, so what is held stays small. */
const MAX_HELD_MUTATIONS = 1_000;

/** The page of a session, as its full snapshots and mutations make it. */
export interface PageMirror {
  /** A full snapshot's tree (`data.node` of an rrweb full snapshot): the page starts again from it. */
  snapshot(root: unknown): void;
  /** A mutation (`data` of an rrweb incremental snapshot of source Mutation), applied in its turn. */
  mutate(mutation: unknown): void;
  /** The page now; null before the first full snapshot, or when the last one was not a tree. */
  current(): DomMirror | null;
}

/**
 * A page mirror keeping `content` of each node (elements.ts' `NAMING_CONTENT` for names).
 * `maxHeldMutations` (default 1,000) bounds the mutations held while the mirror is not built.
 *
 * @example
 * ```ts
 * const page = createPageMirror(NAMING_CONTENT);
 * page.snapshot(fullSnapshot.data.node);
 * page.mutate(mutation.data);
 * const mirror = page.current(); // built here, once
 * ```
 */
export function createPageMirror(
  content: MirrorContent,
  options: { maxHeldMutations?: number } = {},
): PageMirror {
  const maxHeld = options.maxHeldMutations ?? MAX_HELD_MUTATIONS;
  let held: { root: unknown; mutations: unknown[] } | null = null;
  let mirror: DomMirror | null = null;
  const current = (): DomMirror | null => {
    if (held !== null) {
      mirror = mirrorOf(held.root, content);
      if (mirror !== null) for (const mutation of held.mutations) applyMutation(mirror, mutation);
      held = null;
    }
    return mirror;
  };
  return {
    snapshot(root) {
      held = { root, mutations: [] };
      mirror = null;
    },
    mutate(mutation) {
      if (held !== null) {
        held.mutations.push(mutation);
        if (held.mutations.length > maxHeld) current();
      } else if (mirror !== null) applyMutation(mirror, mutation);
    },
    current,
  };
}
