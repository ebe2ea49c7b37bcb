// The page's element tree as a session's rrweb events build it: a full snapshot, then its
// mutations. Facts read click targets' selectors from it (selector.ts); by default only what a
// selector is made of is kept (node type, id, tag name, the `id` and `class` attributes, the
// children's order): never text, input values or any other attribute, so nothing masked is ever
// held here, and the mirror stays small enough to be kept between jobs. A reader that names
// elements as people do (analysis: a transcript's clicks by role and accessible name) asks for
// more attributes and the text nodes' text, as the SDK recorded it (masked text stays masked).

import { type IndexedNode, isSnapshotNode, type SnapshotNode } from './selector.ts';

/** What a mirror keeps of each node besides its type, id, tag name and children. */
export interface MirrorContent {
  /** The attributes kept (their string values); the others are dropped. */
  attributes: readonly string[];
  /** Whether text nodes keep their `textContent` (and text mutations apply). */
  text: boolean;
}

/** A snapshot's tree and each of its nodes by rrweb id. */
export interface DomMirror {
  root: SnapshotNode;
  index: Map<number, IndexedNode>;
  /** What its nodes keep. */
  content: MirrorContent;
}

/** What a selector reads: the `id` and `class` attributes, no text. */
const SELECTOR_CONTENT: MirrorContent = { attributes: ['id', 'class'], text: false };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Each kept attribute's place in `content.attributes`, by content (kept attributes keep that order). */
const attributeOrders = new WeakMap<MirrorContent, ReadonlyMap<string, number>>();

function attributeOrder(content: MirrorContent): ReadonlyMap<string, number> {
  let order = attributeOrders.get(content);
  if (order === undefined) {
    order = new Map(content.attributes.map((name, index) => [name, index]));
    attributeOrders.set(content, order);
  }
  return order;
}

/**
 * The attributes `order` keeps that hold a string, in `order`'s order. A node has a few
 * attributes and a mirror may keep a dozen names: looking up each of the node's own is what
 * keeps copying a page of thousands of nodes cheap (a full snapshot comes with every checkout).
 */
function keptAttributes(
  attributes: Record<string, unknown>,
  order: ReadonlyMap<string, number>,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  const names: string[] = [];
  for (const name in attributes) {
    if (order.has(name) && typeof attributes[name] === 'string') names.push(name);
  }
  if (names.length > 1) names.sort((a, b) => (order.get(a) as number) - (order.get(b) as number));
  for (const name of names) kept[name] = attributes[name];
  return kept;
}

/** A serialized node with only what `content` keeps, and its subtree likewise; null if not a node. */
function strip(value: unknown, content: MirrorContent, order = attributeOrder(content)): SnapshotNode | null {
  if (!isSnapshotNode(value)) return null;
  const node: SnapshotNode = { type: value.type, id: value.id };
  if (typeof value.tagName === 'string') node.tagName = value.tagName;
  if (content.text && typeof (value as { textContent?: unknown }).textContent === 'string') {
    node.textContent = (value as { textContent: string }).textContent;
  }
  if (isRecord(value.attributes)) node.attributes = keptAttributes(value.attributes, order);
  if (Array.isArray(value.childNodes)) {
    const children: SnapshotNode[] = [];
    for (const child of value.childNodes) {
      const stripped = strip(child, content, order);
      if (stripped !== null) children.push(stripped);
    }
    node.childNodes = children;
  }
  return node;
}

function indexInto(index: Map<number, IndexedNode>, node: SnapshotNode, parentId: number | null): void {
  const stack: Array<{ node: SnapshotNode; parentId: number | null }> = [{ node, parentId }];
  while (stack.length > 0) {
    const entry = stack.pop() as { node: SnapshotNode; parentId: number | null };
    index.set(entry.node.id, entry);
    for (const child of (entry.node.childNodes ?? []) as SnapshotNode[])
      stack.push({ node: child, parentId: entry.node.id });
  }
}

function unindex(index: Map<number, IndexedNode>, node: SnapshotNode): void {
  const stack = [node];
  while (stack.length > 0) {
    const next = stack.pop() as SnapshotNode;
    index.delete(next.id);
    stack.push(...((next.childNodes ?? []) as SnapshotNode[]));
  }
}

/**
 * A mirror of an rrweb full snapshot's tree (`event.data.node`), stripped to what `content` keeps
 * (by default what selectors read); null when `root` is not a serialized node. Also reads a
 * mirror's own `root` back (after it was kept as JSON between jobs).
 *
 * @example
 * ```ts
 * const mirror = mirrorOf(fullSnapshot.data.node);
 * selectorOf(mirror.index, clickedNodeId);
 * const named = mirrorOf(fullSnapshot.data.node, { attributes: ['id', 'class', 'aria-label'], text: true });
 * ```
 */
export function mirrorOf(root: unknown, content: MirrorContent = SELECTOR_CONTENT): DomMirror | null {
  const stripped = strip(root, content);
  if (stripped === null) return null;
  const index = new Map<number, IndexedNode>();
  indexInto(index, stripped, null);
  return { root: stripped, index, content };
}

interface Add {
  parentId: number;
  nextId: number | null;
  node: unknown;
}

function isAdd(value: unknown): value is Add {
  return (
    isRecord(value) &&
    typeof value.parentId === 'number' &&
    (value.nextId === null || value.nextId === undefined || typeof value.nextId === 'number') &&
    isSnapshotNode(value.node)
  );
}

/**
 * Applies an rrweb mutation (incremental snapshot, source Mutation: `removes`, `adds`,
 * `attributes`) to the mirror as rrweb's replayer does: removals first, then additions (each
 * before its `nextId` sibling, or last; an addition whose parent or next sibling comes in a later
 * addition of the same mutation waits for it), then the changes of the attributes it keeps, and of
 * texts when it keeps text. Whatever refers to a node the mirror does not have is left out.
 *
 * @example
 * ```ts
 * applyMutation(mirror, { adds: [{ parentId: 5, nextId: null, node: { type: 2, id: 9, tagName: 'div', attributes: {}, childNodes: [] } }], removes: [], attributes: [], texts: [] });
 * ```
 */
export function applyMutation(mirror: DomMirror, mutation: unknown): void {
  if (!isRecord(mutation)) return;
  const { index } = mirror;
  for (const removal of Array.isArray(mutation.removes) ? mutation.removes : []) {
    if (!isRecord(removal) || typeof removal.id !== 'number') continue;
    const entry = index.get(removal.id);
    if (entry === undefined) continue;
    const parent = entry.parentId === null ? undefined : index.get(entry.parentId);
    if (parent?.node.childNodes !== undefined) {
      const at = parent.node.childNodes.indexOf(entry.node);
      if (at !== -1) parent.node.childNodes.splice(at, 1);
    }
    unindex(index, entry.node);
  }
  let pending = (Array.isArray(mutation.adds) ? mutation.adds : []).filter(isAdd);
  while (pending.length > 0) {
    const waiting: Add[] = [];
    for (const add of pending) {
      const parent = index.get(add.parentId);
      const nextId = add.nextId ?? null;
      if (parent === undefined || (nextId !== null && !index.has(nextId))) {
        waiting.push(add);
        continue;
      }
      const node = strip(add.node, mirror.content) as SnapshotNode;
      const previous = index.get(node.id);
      if (previous !== undefined) {
        const owner = previous.parentId === null ? undefined : index.get(previous.parentId);
        const at = owner?.node.childNodes?.indexOf(previous.node) ?? -1;
        if (at !== -1) owner?.node.childNodes?.splice(at, 1);
        unindex(index, previous.node);
      }
      parent.node.childNodes ??= [];
      const children = parent.node.childNodes;
      const before = nextId === null ? -1 : children.indexOf(index.get(nextId)?.node);
      if (before === -1) children.push(node);
      else children.splice(before, 0, node);
      indexInto(index, node, parent.node.id);
    }
    // Nothing placed in a round: the rest refer to nodes this mirror never had.
    if (waiting.length === pending.length) {
      for (const add of waiting) {
        const parent = index.get(add.parentId);
        if (parent === undefined) continue;
        const node = strip(add.node, mirror.content) as SnapshotNode;
        if (index.has(node.id)) continue;
        parent.node.childNodes ??= [];
        parent.node.childNodes.push(node);
        indexInto(index, node, parent.node.id);
      }
      break;
    }
    pending = waiting;
  }
  for (const change of Array.isArray(mutation.attributes) ? mutation.attributes : []) {
    if (!isRecord(change) || typeof change.id !== 'number' || !isRecord(change.attributes)) continue;
    const node = index.get(change.id)?.node;
    if (node === undefined) continue;
    for (const name of mirror.content.attributes) {
      if (!(name in change.attributes)) continue;
      const value = change.attributes[name];
      node.attributes ??= {};
      if (typeof value === 'string') node.attributes[name] = value;
      else delete node.attributes[name];
    }
  }
  if (!mirror.content.text) return;
  for (const change of Array.isArray(mutation.texts) ? mutation.texts : []) {
    if (!isRecord(change) || typeof change.id !== 'number') continue;
    const node = index.get(change.id)?.node;
    if (node !== undefined && typeof change.value === 'string') node.textContent = change.value;
  }
}
