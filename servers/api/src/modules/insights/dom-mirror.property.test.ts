import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type MirrorContent, mirrorOf } from './index.ts';

// A mirror's copy of a node keeps exactly the attributes its content names that hold a string, in
// the content's order (whatever the node's own order), and drops what is not a node: checked
// against the plain definition, over serialized trees with attributes of every kind.

const NAMES = ['id', 'class', 'role', 'aria-label', 'for', 'href', 'style', 'data-testid', 'value', 'title'];

interface Serialized {
  type: number;
  id: number;
  tagName?: string;
  attributes?: unknown;
  childNodes?: unknown[];
  textContent?: unknown;
}

/** Attribute values of every kind a recording may hold (rrweb writes numbers and booleans too). */
const attributeValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(''),
);

/** Attributes with random names (kept and not) in a random order, or something that is not an object. */
const attributes = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...NAMES), attributeValue, { maxKeys: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, 'class', [], ['id']) },
);

const { tree } = fc.letrec<{ tree: Serialized; child: unknown }>((tie) => ({
  tree: fc.record(
    {
      type: fc.constantFrom(0, 2, 3),
      id: fc.integer({ min: 1, max: 10_000 }),
      tagName: fc.constantFrom('div', 'button', 'input', 'label'),
      attributes,
      textContent: fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
      childNodes: fc.array(tie('child'), { maxLength: 4 }),
    },
    { requiredKeys: ['type', 'id'] },
  ),
  child: fc.oneof(
    { weight: 5, arbitrary: tie('tree') },
    { weight: 1, arbitrary: fc.constantFrom(null, 7, 'x', {}) },
  ),
}));

/** The definition: for each name the content keeps, in its order, the node's value when a string. */
function reference(value: unknown, content: MirrorContent): unknown {
  if (typeof value !== 'object' || value === null) return null;
  const node = value as Serialized;
  if (typeof node.type !== 'number' || typeof node.id !== 'number') return null;
  const copy: Record<string, unknown> = { type: node.type, id: node.id };
  if (typeof node.tagName === 'string') copy.tagName = node.tagName;
  if (content.text && typeof node.textContent === 'string') copy.textContent = node.textContent;
  if (typeof node.attributes === 'object' && node.attributes !== null) {
    const kept: Record<string, unknown> = {};
    for (const name of content.attributes) {
      const attribute = (node.attributes as Record<string, unknown>)[name];
      if (typeof attribute === 'string') kept[name] = attribute;
    }
    copy.attributes = kept;
  }
  if (Array.isArray(node.childNodes))
    copy.childNodes = node.childNodes
      .map((child) => reference(child, content))
      .filter((child) => child !== null);
  return copy;
}

describe('mirrorOf', () => {
  it('keeps the attributes its content names that hold a string, in that order, and text when asked', () => {
    const contents = fc.record({
      attributes: fc.shuffledSubarray(NAMES),
      text: fc.boolean(),
    });
    fc.assert(
      fc.property(tree, contents, (root, content) => {
        const mirror = mirrorOf(root, content);
        // JSON text, so that the order of each copy's attributes counts too.
        expect(JSON.stringify(mirror?.root ?? null)).toBe(JSON.stringify(reference(root, content)));
      }),
      { numRuns: 500 },
    );
  });

  it('copies in the content order, not the node order', () => {
    const mirror = mirrorOf(
      {
        type: 2,
        id: 1,
        tagName: 'button',
        attributes: { title: 'Pay', 'aria-label': 'Pay now', id: 'pay', tabindex: 0, class: 'primary' },
        childNodes: [null, { type: 3, id: 2, textContent: 'Pay' }],
      },
      { attributes: ['id', 'class', 'aria-label', 'title', 'tabindex'], text: false },
    );
    expect(JSON.stringify(mirror?.root)).toBe(
      '{"type":2,"id":1,"tagName":"button","attributes":{"id":"pay","class":"primary","aria-label":"Pay now","title":"Pay"},"childNodes":[{"type":3,"id":2}]}',
    );
  });
});
