// Elements of a recorded page as people and test tools name them: the ARIA role, the accessible
// name, and a locator a Playwright script can find again. Read from the DOM mirror a session's
// rrweb events build (insights' dom-mirror.ts, here keeping text and a few more attributes). The
// SDK masks text by default (each character `*`): a name made only of masked text is no name, and
// never becomes one by guessing.

import {
  type DomMirror,
  type IndexedNode,
  type MirrorContent,
  type SnapshotNode,
  selectorOf,
} from '../insights/index.ts';

/** What the analysis mirror keeps: the attributes names, roles and locators are made of, and text. */
export const NAMING_CONTENT: MirrorContent = {
  attributes: [
    'id',
    'class',
    'role',
    'type',
    'name',
    'href',
    'for',
    'title',
    'alt',
    'placeholder',
    'aria-label',
    'aria-labelledby',
    'data-testid',
    'data-test',
    'data-cy',
    'data-test-id',
  ],
  text: true,
};

/** The test-id attributes, in the order a locator prefers them (`data-testid` is Playwright's). */
const TEST_ID_ATTRIBUTES = ['data-testid', 'data-test', 'data-test-id', 'data-cy'] as const;

/** Elements a click is about: the nearest of these around the clicked node. */
const INTERACTIVE_TAGS = new Set([
  'a',
  'button',
  'input',
  'select',
  'textarea',
  'label',
  'summary',
  'option',
]);
const INTERACTIVE_ROLES = new Set([
  'button',
  'link',
  'checkbox',
  'radio',
  'switch',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'combobox',
  'textbox',
  'searchbox',
  'slider',
  'spinbutton',
  'treeitem',
]);
/** Roles whose accessible name comes from their content (WAI-ARIA "name from content"). */
const NAME_FROM_CONTENT = new Set([
  'button',
  'link',
  'checkbox',
  'radio',
  'switch',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'heading',
  'treeitem',
  'cell',
  'columnheader',
  'rowheader',
  'tooltip',
  'listitem',
]);
/** Longest name kept (characters); longer ones are cut with an ellipsis. */
const MAX_NAME = 80;

/** What a transcript says of an element, and what a reproduction finds it by. */
export interface ElementDescription {
  /** The rrweb id of the element described (the interactive one around the node acted on). */
  nodeId: number;
  tag: string;
  /** The explicit or implicit ARIA role, when it has one. */
  role?: string;
  /** The accessible name, when it is not masked (masked parts of a partly masked name are `…`). */
  name?: string;
  /** The name is made of text the SDK masked (so the transcript says so instead). */
  nameMasked: boolean;
  /** A CSS selector matching it in the recorded document (below `body`), when it is in the mirror. */
  selector: string | null;
  /** Its `id`, when it looks written by hand (not generated: no long digit runs, no `:r1:`). */
  stableId?: string;
  /** Its test id: the attribute and the value. */
  testId?: { attribute: string; value: string };
  /** For form fields: the input type (`text`, `email`, `checkbox`, ...; `select`, `textarea`). */
  fieldType?: string;
  /** For form fields: the text of its label, when not masked. */
  label?: string;
  /** For form fields: its placeholder, when not masked. */
  placeholder?: string;
}

function attribute(node: SnapshotNode, name: string): string | undefined {
  const value = node.attributes?.[name];
  return typeof value === 'string' ? value : undefined;
}

function isElement(node: SnapshotNode): node is SnapshotNode & { tagName: string } {
  return node.type === 2 && typeof node.tagName === 'string' && node.tagName !== '';
}

/** Whether a text, once trimmed, is masked through and through (`***`, `** ****`). */
export function isMaskedText(text: string): boolean {
  return /^[*\s]+$/.test(text) && text.includes('*');
}

/** Whitespace collapsed, masked runs as `…`, cut to {@link MAX_NAME}; undefined when nothing is left. */
function cleanName(text: string | undefined): { name?: string; masked: boolean } {
  if (text === undefined) return { masked: false };
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (collapsed === '') return { masked: false };
  if (isMaskedText(collapsed)) return { masked: true };
  const readable = collapsed.replace(/\*{2,}/g, '…');
  return {
    name: readable.length > MAX_NAME ? `${readable.slice(0, MAX_NAME - 1)}…` : readable,
    masked: readable !== collapsed,
  };
}

/** The text of a subtree, as its text nodes hold it (scripts and styles left out). */
function textOf(node: SnapshotNode): string {
  const parts: string[] = [];
  const stack: SnapshotNode[] = [node];
  while (stack.length > 0) {
    const next = stack.pop() as SnapshotNode;
    if (next.type === 3 && typeof next.textContent === 'string') parts.push(next.textContent);
    if (isElement(next) && (next.tagName === 'script' || next.tagName === 'style')) continue;
    const children = (next.childNodes ?? []) as SnapshotNode[];
    for (let index = children.length - 1; index >= 0; index -= 1) stack.push(children[index] as SnapshotNode);
  }
  return parts.join(' ');
}

/** The implicit ARIA role of an element (the common ones of HTML-AAM), or its explicit `role`. */
function roleOf(node: SnapshotNode): string | undefined {
  const explicit = attribute(node, 'role')?.trim().split(/\s+/)[0];
  if (explicit !== undefined && explicit !== '') return explicit;
  const tag = node.tagName ?? '';
  switch (tag) {
    case 'a':
    case 'area':
      return attribute(node, 'href') === undefined ? undefined : 'link';
    case 'button':
      return 'button';
    case 'input': {
      const type = (attribute(node, 'type') ?? 'text').toLowerCase();
      if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
      if (type === 'checkbox') return 'checkbox';
      if (type === 'radio') return 'radio';
      if (type === 'range') return 'slider';
      if (type === 'number') return 'spinbutton';
      if (type === 'search') return 'searchbox';
      if (['text', 'email', 'tel', 'url', ''].includes(type)) return 'textbox';
      return undefined;
    }
    case 'select':
      return 'combobox';
    case 'textarea':
      return 'textbox';
    case 'option':
      return 'option';
    case 'img':
      return 'img';
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
      return 'heading';
    case 'nav':
      return 'navigation';
    case 'li':
      return 'listitem';
    case 'dialog':
      return 'dialog';
    case 'summary':
      return 'button';
    default:
      return undefined;
  }
}

function isFormField(node: SnapshotNode): boolean {
  return node.tagName === 'input' || node.tagName === 'select' || node.tagName === 'textarea';
}

/** The elements of the mirror by their `id` attribute (first in document order wins). */
function elementsById(mirror: DomMirror): Map<string, SnapshotNode> {
  const byId = new Map<string, SnapshotNode>();
  for (const { node } of mirror.index.values()) {
    const id = attribute(node, 'id');
    if (id !== undefined && !byId.has(id)) byId.set(id, node);
  }
  return byId;
}

/** The label of a form field: a `<label for=id>`, else the `<label>` around it. */
function labelOf(mirror: DomMirror, entry: IndexedNode): SnapshotNode | undefined {
  const id = attribute(entry.node, 'id');
  if (id !== undefined) {
    for (const { node } of mirror.index.values()) {
      if (node.tagName === 'label' && attribute(node, 'for') === id) return node;
    }
  }
  let parent = entry.parentId === null ? undefined : mirror.index.get(entry.parentId);
  while (parent !== undefined && isElement(parent.node)) {
    if (parent.node.tagName === 'label') return parent.node;
    parent = parent.parentId === null ? undefined : mirror.index.get(parent.parentId);
  }
  return undefined;
}

/**
 * The accessible name of an element, after the accessible name computation's common steps:
 * `aria-labelledby`, `aria-label`, a form field's label, `alt` of an image, the content of roles
 * named from content, `placeholder`, `title`. Masked text makes no name (`masked: true`).
 */
function accessibleName(
  mirror: DomMirror,
  entry: IndexedNode,
  role: string | undefined,
): { name?: string; masked: boolean } {
  const { node } = entry;
  let masked = false;
  const consider = (text: string | undefined): string | undefined => {
    const cleaned = cleanName(text);
    if (cleaned.masked) masked = true;
    return cleaned.name;
  };
  const labelledBy = attribute(node, 'aria-labelledby');
  if (labelledBy !== undefined && labelledBy.trim() !== '') {
    const byId = elementsById(mirror);
    const text = labelledBy
      .trim()
      .split(/\s+/)
      .map((id) => {
        const referenced = byId.get(id);
        return referenced === undefined ? '' : textOf(referenced);
      })
      .join(' ');
    const name = consider(text);
    if (name !== undefined) return { name, masked };
  }
  const ariaLabel = consider(attribute(node, 'aria-label'));
  if (ariaLabel !== undefined) return { name: ariaLabel, masked };
  if (isFormField(node)) {
    const label = labelOf(mirror, entry);
    const name = label === undefined ? undefined : consider(textOf(label));
    if (name !== undefined) return { name, masked };
  }
  if (node.tagName === 'img') {
    const alt = consider(attribute(node, 'alt'));
    if (alt !== undefined) return { name: alt, masked };
  }
  if (role !== undefined && NAME_FROM_CONTENT.has(role)) {
    const content = consider(textOf(node));
    if (content !== undefined) return { name: content, masked };
  }
  const placeholder = isFormField(node) ? consider(attribute(node, 'placeholder')) : undefined;
  if (placeholder !== undefined) return { name: placeholder, masked };
  const title = consider(attribute(node, 'title'));
  if (title !== undefined) return { name: title, masked };
  return { masked };
}

/** An `id` that a person wrote: no run of 4 digits, no `:` (React's `:r1:`), not a hash. */
function looksStable(id: string): boolean {
  return id !== '' && !/\d{4}|:|^[0-9a-f]{8,}$/i.test(id) && id.length <= 64;
}

/** The nearest element at or above `nodeId` that a person acts on (else the nearest element). */
function interactiveEntry(mirror: DomMirror, nodeId: number): IndexedNode | undefined {
  let entry = mirror.index.get(nodeId);
  while (entry !== undefined && !isElement(entry.node)) {
    entry = entry.parentId === null ? undefined : mirror.index.get(entry.parentId);
  }
  const nearest = entry;
  while (entry !== undefined && isElement(entry.node)) {
    const { node } = entry;
    if (node.tagName === 'body' || node.tagName === 'html') break;
    const role = attribute(node, 'role');
    if (
      INTERACTIVE_TAGS.has(node.tagName as string) ||
      (role !== undefined && INTERACTIVE_ROLES.has(role)) ||
      TEST_ID_ATTRIBUTES.some((name) => attribute(node, name) !== undefined)
    ) {
      return entry;
    }
    entry = entry.parentId === null ? undefined : mirror.index.get(entry.parentId);
  }
  return nearest;
}

/**
 * What a transcript says of the element acted on at `nodeId` (the button around a clicked icon,
 * say) and how a test finds it again; null when the node is not in the mirror.
 *
 * @example
 * ```ts
 * describeElement(mirror, 42);
 * // { nodeId: 40, tag: 'button', role: 'button', name: 'Pay now', nameMasked: false, selector: 'main > button#pay', stableId: 'pay' }
 * ```
 */
export function describeElement(mirror: DomMirror, nodeId: number): ElementDescription | null {
  const entry = interactiveEntry(mirror, nodeId);
  if (entry === undefined || !isElement(entry.node)) return null;
  const { node } = entry;
  const role = roleOf(node);
  const { name, masked } = accessibleName(mirror, entry, role);
  const description: ElementDescription = {
    nodeId: node.id,
    tag: node.tagName as string,
    nameMasked: masked && name === undefined,
    selector: selectorOf(mirror.index, node.id),
  };
  if (role !== undefined) description.role = role;
  if (name !== undefined) description.name = name;
  const id = attribute(node, 'id');
  if (id !== undefined && looksStable(id)) description.stableId = id;
  for (const testAttribute of TEST_ID_ATTRIBUTES) {
    const value = attribute(node, testAttribute);
    if (value !== undefined && value !== '') {
      description.testId = { attribute: testAttribute, value };
      break;
    }
  }
  if (isFormField(node)) {
    description.fieldType =
      node.tagName === 'input' ? (attribute(node, 'type') ?? 'text').toLowerCase() : (node.tagName as string);
    const label = labelOf(mirror, entry);
    const labelText = label === undefined ? undefined : cleanName(textOf(label));
    if (labelText?.name !== undefined && !labelText.masked) description.label = labelText.name;
    const placeholder = cleanName(attribute(node, 'placeholder'));
    if (placeholder.name !== undefined && !placeholder.masked) description.placeholder = placeholder.name;
  }
  return description;
}

/**
 * How many elements of the mirror a Playwright locator of the description would match, for the
 * kinds of locator {@link describeElement} offers: by test id, by role and exact name, by label,
 * by id, by placeholder. Playwright's locators are strict: a script may use only one matching 1.
 */
function countMatches(
  mirror: DomMirror,
  by:
    | { kind: 'testId'; attribute: string; value: string }
    | { kind: 'role'; role: string; name: string }
    | { kind: 'label'; label: string }
    | { kind: 'id'; id: string }
    | { kind: 'placeholder'; placeholder: string },
): number {
  let count = 0;
  for (const entry of mirror.index.values()) {
    const { node } = entry;
    if (!isElement(node)) continue;
    switch (by.kind) {
      case 'testId':
        if (attribute(node, by.attribute) === by.value) count += 1;
        break;
      case 'id':
        if (attribute(node, 'id') === by.id) count += 1;
        break;
      case 'placeholder':
        if (isFormField(node) && cleanName(attribute(node, 'placeholder')).name === by.placeholder)
          count += 1;
        break;
      case 'label':
        if (isFormField(node)) {
          const label = labelOf(mirror, entry);
          const aria = cleanName(attribute(node, 'aria-label')).name;
          if (aria === by.label || (label !== undefined && cleanName(textOf(label)).name === by.label))
            count += 1;
        }
        break;
      case 'role': {
        const role = roleOf(node);
        if (role === by.role && accessibleName(mirror, entry, role).name === by.name) count += 1;
        break;
      }
    }
  }
  return count;
}

/** A string as a JavaScript string literal. */
export function literal(value: string): string {
  return JSON.stringify(value);
}

/**
 * A Playwright locator expression (on `page`) that finds the described element again, chosen for
 * robustness: its test id, its role and exact accessible name, its label, a hand-written `id`, its
 * placeholder, and last its CSS selector; each only when it matches exactly one element of the
 * recorded document (Playwright's locators are strict). Null when the element has no selector.
 *
 * @example
 * ```ts
 * playwrightLocator(mirror, describeElement(mirror, 42)); // 'page.getByRole("button", { name: "Pay now", exact: true })'
 * ```
 */
export function playwrightLocator(mirror: DomMirror, element: ElementDescription): string | null {
  const { testId, role, name, label, stableId, placeholder } = element;
  if (testId !== undefined && countMatches(mirror, { kind: 'testId', ...testId }) === 1) {
    return testId.attribute === 'data-testid'
      ? `page.getByTestId(${literal(testId.value)})`
      : `page.locator(${literal(`[${testId.attribute}=${literal(testId.value)}]`)})`;
  }
  if (
    role !== undefined &&
    name !== undefined &&
    !name.includes('…') &&
    countMatches(mirror, { kind: 'role', role, name }) === 1
  ) {
    return `page.getByRole(${literal(role)}, { name: ${literal(name)}, exact: true })`;
  }
  if (label !== undefined && countMatches(mirror, { kind: 'label', label }) === 1) {
    return `page.getByLabel(${literal(label)}, { exact: true })`;
  }
  if (stableId !== undefined && countMatches(mirror, { kind: 'id', id: stableId }) === 1) {
    return /^[A-Za-z_][\w-]*$/.test(stableId)
      ? `page.locator(${literal(`#${stableId}`)})`
      : `page.locator(${literal(`[id=${literal(stableId)}]`)})`;
  }
  if (placeholder !== undefined && countMatches(mirror, { kind: 'placeholder', placeholder }) === 1) {
    return `page.getByPlaceholder(${literal(placeholder)}, { exact: true })`;
  }
  return element.selector === null ? null : `page.locator(${literal(`body > ${element.selector}`)})`;
}
