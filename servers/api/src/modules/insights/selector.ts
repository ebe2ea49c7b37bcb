// CSS selectors for the targets of clicks, built from an rrweb full snapshot's node tree
// (servers/api/README.md, Insights). Only tag names, `id` and `class` enter a selector: never
// text or any other attribute's value, so masked text cannot end up in one.

/** rrweb's serialized node types (rrweb-snapshot `NodeType`) that the index reads. */
const NODE_TYPE = { element: 2 } as const;

/** A node of rrweb's serialized tree; only these fields are read. */
export interface SnapshotNode {
  type: number;
  id: number;
  tagName?: string;
  attributes?: Record<string, unknown>;
  childNodes?: unknown[];
  /** A text node's text (kept by mirrors that keep text; see dom-mirror.ts). */
  textContent?: string;
}

/** A node of the index with its parent's id (`null` for the root). */
export interface IndexedNode {
  node: SnapshotNode;
  parentId: number | null;
}

/** Each node of a snapshot by its rrweb id. */
export type SnapshotIndex = ReadonlyMap<number, IndexedNode>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isSnapshotNode(value: unknown): value is SnapshotNode {
  return isRecord(value) && typeof value.type === 'number' && typeof value.id === 'number';
}

/**
 * An index of an rrweb full snapshot's tree (`event.data.node` of a full snapshot event): every
 * node by its id, with its parent. Anything that is not a node (no numeric `type` and `id`) is
 * skipped with what is below it; of two nodes with one id, the first in document order is kept.
 *
 * @example
 * ```ts
 * const index = indexSnapshot({ type: 0, id: 1, childNodes: [{ type: 2, id: 2, tagName: 'html', attributes: {}, childNodes: [] }] });
 * index.get(2)?.parentId; // 1
 * ```
 */
export function indexSnapshot(root: unknown): SnapshotIndex {
  const index = new Map<number, IndexedNode>();
  const stack: Array<{ node: unknown; parentId: number | null }> = [{ node: root, parentId: null }];
  while (stack.length > 0) {
    const { node, parentId } = stack.pop() as { node: unknown; parentId: number | null };
    if (!isSnapshotNode(node) || index.has(node.id)) continue;
    index.set(node.id, { node, parentId });
    const children = Array.isArray(node.childNodes) ? node.childNodes : [];
    for (let child = children.length - 1; child >= 0; child -= 1) {
      stack.push({ node: children[child], parentId: node.id });
    }
  }
  return index;
}

function isElement(node: SnapshotNode): node is SnapshotNode & { tagName: string } {
  return node.type === NODE_TYPE.element && typeof node.tagName === 'string' && node.tagName !== '';
}

/**
 * A string as a CSS identifier, escaped as CSSOM's `CSS.escape` does
 * (https://drafts.csswg.org/cssom/#serialize-an-identifier).
 */
function escapeIdentifier(value: string): string {
  let escaped = '';
  for (const [index, character] of [...value].entries()) {
    const code = character.codePointAt(0) as number;
    if (code === 0) escaped += '\uFFFD';
    else if (
      (code >= 0x1 && code <= 0x1f) ||
      code === 0x7f ||
      (index === 0 && code >= 0x30 && code <= 0x39) ||
      (index === 1 && code >= 0x30 && code <= 0x39 && value.startsWith('-'))
    ) {
      escaped += `\\${code.toString(16)} `;
    } else if (index === 0 && value === '-') escaped += '\\-';
    else if (code >= 0x80 || /[-_0-9A-Za-z]/.test(character)) escaped += character;
    else escaped += `\\${character}`;
  }
  return escaped;
}

/** The first two class names of an element's `class` attribute. */
function classesOf(node: SnapshotNode): string[] {
  const value = node.attributes?.class;
  return typeof value === 'string'
    ? value
        .split(/[\t\n\f\r ]+/)
        .filter(Boolean)
        .slice(0, 2)
    : [];
}

function idOf(node: SnapshotNode): string | undefined {
  const value = node.attributes?.id;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Whether `sibling` matches the compound selector `tag#id.class…` built for `node`. */
function matchesCompound(sibling: SnapshotNode, node: SnapshotNode & { tagName: string }): boolean {
  if (!isElement(sibling) || sibling.tagName !== node.tagName) return false;
  const id = idOf(node);
  if (id !== undefined && idOf(sibling) !== id) return false;
  const siblingClasses =
    typeof sibling.attributes?.class === 'string' ? sibling.attributes.class.split(/[\t\n\f\r ]+/) : [];
  return classesOf(node).every((name) => siblingClasses.includes(name));
}

function compoundOf(node: SnapshotNode & { tagName: string }, children: readonly unknown[]): string {
  const siblings = children.filter(isSnapshotNode);
  const id = idOf(node);
  let compound = escapeIdentifier(node.tagName);
  if (id !== undefined) compound += `#${escapeIdentifier(id)}`;
  for (const name of classesOf(node)) compound += `.${escapeIdentifier(name)}`;
  if (siblings.filter((sibling) => matchesCompound(sibling, node)).length > 1) {
    const sameTag = siblings.filter((sibling) => isElement(sibling) && sibling.tagName === node.tagName);
    compound += `:nth-of-type(${sameTag.indexOf(node) + 1})`;
  }
  return compound;
}

/**
 * A CSS selector for the element `nodeId` (or, for a text or other node, its nearest element):
 * its ancestors' and its own compound selectors joined by `>`, from the child of `body` down
 * (`html` and `body` themselves are left out unless the element is one of them), so that
 * `body > ${selector}` matches exactly that element in the snapshot. Each compound is the tag
 * name, `#id` when the element has an `id`, up to its first 2 class names, and
 * `:nth-of-type(n)` when another sibling would match the same compound. Identifiers are escaped
 * as `CSS.escape` does. `null` when the node is not in the index or has no element.
 *
 * @example
 * ```ts
 * selectorOf(index, 42); // 'main > form#checkout > button.pay:nth-of-type(2)'
 * ```
 */
export function selectorOf(index: SnapshotIndex, nodeId: number): string | null {
  let entry: IndexedNode | undefined = index.get(nodeId);
  while (entry !== undefined && !isElement(entry.node)) {
    entry = entry.parentId === null ? undefined : index.get(entry.parentId);
  }
  if (entry === undefined) return null;
  const compounds: string[] = [];
  let first = true;
  while (entry !== undefined && isElement(entry.node)) {
    const node = entry.node;
    const parent: IndexedNode | undefined = entry.parentId === null ? undefined : index.get(entry.parentId);
    const isDocumentLevel = node.tagName === 'body' || node.tagName === 'html';
    if (!first && isDocumentLevel) break;
    compounds.push(compoundOf(node, parent?.node.childNodes ?? [node]));
    if (isDocumentLevel) break;
    first = false;
    entry = parent;
  }
  return compounds.reverse().join(' > ');
}
