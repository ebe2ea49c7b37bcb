import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMutation, type DomMirror, mirrorOf } from '../insights/index.ts';
import { NAMING_CONTENT } from './elements.ts';
import { createPageMirror } from './page-mirror.ts';

// The page mirror is built when read, from the last full snapshot and the mutations held since:
// whenever it is read, it is the mirror that applying every event in its turn would have made.
// Over random snapshots and mutations (adds, removes, attributes and texts, with ids that clash,
// refer to nothing or to nodes added later in the same mutation, and values that are not nodes).

const ids = fc.integer({ min: 1, max: 24 });

const { node } = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    {
      weight: 1,
      arbitrary: fc.record({
        type: fc.constant(3),
        id: ids,
        textContent: fc.constantFrom('Pay', '***', 'Total'),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        type: fc.constant(2),
        id: ids,
        tagName: fc.constantFrom('div', 'button', 'label', 'input', 'a'),
        attributes: fc.dictionary(
          fc.constantFrom('id', 'class', 'aria-label', 'for', 'href', 'style'),
          fc.constantFrom('pay', 'email', 'Pay now', 'x', 'svc-unmask'),
          { maxKeys: 3 },
        ),
        childNodes: fc.array(tie('node'), { maxLength: 3 }),
      }),
    },
  ),
}));

const snapshot = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ type: fc.constant(0), id: ids, childNodes: fc.array(node, { maxLength: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 5, 'tree') },
);

const mutation = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      adds: fc.array(fc.record({ parentId: ids, nextId: fc.option(ids), node }), { maxLength: 3 }),
      removes: fc.array(fc.record({ parentId: ids, id: ids }), { maxLength: 2 }),
      attributes: fc.array(
        fc.record({
          id: ids,
          attributes: fc.dictionary(
            fc.constantFrom('aria-label', 'class', 'id'),
            fc.constantFrom('Buy', 'y', null),
            {
              maxKeys: 2,
            },
          ),
        }),
        { maxLength: 2 },
      ),
      texts: fc.array(fc.record({ id: ids, value: fc.constantFrom('Done', '****') }), { maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 'x', { adds: 'none' }) },
);

type Step = { kind: 'snapshot'; root: unknown } | { kind: 'mutate'; mutation: unknown } | { kind: 'read' };

const steps = fc.array(
  fc.oneof(
    { weight: 1, arbitrary: snapshot.map((root): Step => ({ kind: 'snapshot', root })) },
    { weight: 4, arbitrary: mutation.map((value): Step => ({ kind: 'mutate', mutation: value })) },
    { weight: 2, arbitrary: fc.constant<Step>({ kind: 'read' }) },
  ),
  { maxLength: 30 },
);

/** A mirror as JSON text: its tree, and each indexed node with its parent (in id order). */
function shapeOf(mirror: DomMirror | null): string {
  if (mirror === null) return 'null';
  const index = [...mirror.index.entries()]
    .sort(([a], [b]) => a - b)
    .map(([id, entry]) => [id, entry.parentId, entry.node]);
  return JSON.stringify({ root: mirror.root, index });
}

describe('createPageMirror', () => {
  it('reads as the mirror kept up to date event by event', () => {
    fc.assert(
      fc.property(steps, fc.option(fc.integer({ min: 0, max: 3 })), (sequence, maxHeldMutations) => {
        const page = createPageMirror(NAMING_CONTENT, maxHeldMutations === null ? {} : { maxHeldMutations });
        let eager: DomMirror | null = null;
        for (const step of sequence) {
          if (step.kind === 'snapshot') {
            page.snapshot(step.root);
            eager = mirrorOf(step.root, NAMING_CONTENT);
          } else if (step.kind === 'mutate') {
            page.mutate(step.mutation);
            if (eager !== null) applyMutation(eager, step.mutation);
          } else {
            expect(shapeOf(page.current())).toBe(shapeOf(eager));
          }
        }
        expect(shapeOf(page.current())).toBe(shapeOf(eager));
      }),
      { numRuns: 1_000 },
    );
  });

  it('builds the mirror once read, and again only after a new snapshot', () => {
    const page = createPageMirror(NAMING_CONTENT);
    expect(page.current()).toBeNull();
    page.snapshot({ type: 0, id: 1, childNodes: [{ type: 2, id: 2, tagName: 'button', attributes: {} }] });
    const first = page.current();
    page.mutate({ attributes: [{ id: 2, attributes: { 'aria-label': 'Pay' } }] });
    expect(page.current()).toBe(first);
    expect(first?.index.get(2)?.node.attributes).toEqual({ 'aria-label': 'Pay' });
    page.snapshot({ type: 0, id: 1, childNodes: [] });
    expect(page.current()).not.toBe(first);
    page.snapshot('not a tree');
    page.mutate({ adds: [{ parentId: 1, nextId: null, node: { type: 2, id: 3, tagName: 'a' } }] });
    expect(page.current()).toBeNull();
  });
});
