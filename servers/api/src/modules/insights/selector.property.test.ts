import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indexSnapshot, selectorOf } from './index.ts';

const MARKER = 'masked';

interface Shape {
  tagName: string;
  id: string | null;
  classes: string[];
  children: Shape[];
}

/** A tree of elements up to `depth` levels below this one. */
function shapeOf(depth: number): fc.Arbitrary<Shape> {
  return fc.record({
    tagName: fc.constantFrom('div', 'span', 'button', 'section'),
    id: fc.option(fc.constantFrom('a', 'b', 'main'), { freq: 4 }),
    classes: fc.array(fc.constantFrom('x', 'y', 'z', 'w'), { maxLength: 4 }),
    children: depth === 0 ? fc.constant([]) : fc.array(shapeOf(depth - 1), { maxLength: 3 }),
  });
}

const shape = shapeOf(3);

interface Node {
  type: number;
  id: number;
  tagName?: string;
  attributes?: Record<string, string>;
  childNodes?: Node[];
  textContent?: string;
}

/** An rrweb tree: document > html > body > the shapes, each element with masked text and attributes. */
function toTree(shapes: Shape[]): { root: Node; body: Node } {
  let nextId = 1;
  const build = (value: Shape): Node => ({
    type: 2,
    id: nextId++,
    tagName: value.tagName,
    attributes: {
      ...(value.id === null ? {} : { id: value.id }),
      ...(value.classes.length === 0 ? {} : { class: value.classes.join(' ') }),
      'data-note': MARKER,
      value: MARKER,
    },
    childNodes: [{ type: 3, id: nextId++, textContent: MARKER }, ...value.children.map(build)],
  });
  const body: Node = {
    type: 2,
    id: nextId++,
    tagName: 'body',
    attributes: {},
    childNodes: shapes.map(build),
  };
  const root: Node = {
    type: 0,
    id: nextId++,
    childNodes: [{ type: 2, id: nextId++, tagName: 'html', attributes: {}, childNodes: [body] }],
  };
  return { root, body };
}

/** A brute-force matcher for the selectors `selectorOf` writes over these trees' identifiers. */
function matchesAll(body: Node, selector: string): Node[] {
  const compounds = selector.split(' > ').map((compound) => {
    const match = /^([a-z]+)(?:#([a-z]+))?((?:\.[a-z]+)*)(?::nth-of-type\((\d+)\))?$/.exec(compound);
    if (match === null) throw new Error(`unexpected compound ${compound}`);
    return {
      tagName: match[1],
      id: match[2],
      classes: (match[3] ?? '').split('.').filter(Boolean),
      nth: match[4] === undefined ? undefined : Number(match[4]),
    };
  });
  const parents = new Map<Node, Node>();
  const elements: Node[] = [];
  const walk = (node: Node) => {
    for (const child of node.childNodes ?? []) {
      if (child.type !== 2) continue;
      parents.set(child, node);
      elements.push(child);
      walk(child);
    }
  };
  walk(body);
  const matches = (node: Node, compound: (typeof compounds)[number]) => {
    const classes = (node.attributes?.class ?? '').split(' ');
    const sameTag = (parents.get(node)?.childNodes ?? []).filter(
      (sibling) => sibling.tagName === node.tagName,
    );
    return (
      node.tagName === compound.tagName &&
      (compound.id === undefined || node.attributes?.id === compound.id) &&
      compound.classes.every((name) => classes.includes(name)) &&
      (compound.nth === undefined || sameTag.indexOf(node) + 1 === compound.nth)
    );
  };
  return elements.filter((candidate) => {
    let node: Node | undefined = candidate;
    for (let position = compounds.length - 1; position >= 0; position -= 1) {
      if (node === undefined || !matches(node, compounds[position] as (typeof compounds)[number]))
        return false;
      node = parents.get(node);
    }
    return node === body;
  });
}

describe('selectorOf, properties', () => {
  it('body > selector matches exactly the element; text nodes get their element’s selector', () => {
    fc.assert(
      fc.property(fc.array(shape, { minLength: 1, maxLength: 4 }), (shapes) => {
        const { root, body } = toTree(shapes);
        const index = indexSnapshot(root);
        for (const { node, parentId } of index.values()) {
          if (parentId === null || node.type === 0) continue;
          const selector = selectorOf(index, node.id);
          if (node.type === 3) {
            expect(selector).toBe(selectorOf(index, parentId));
            continue;
          }
          if (node === body || node.tagName === 'html') continue;
          expect(matchesAll(body, selector as string)).toEqual([node]);
        }
      }),
    );
  });

  it('never carries text or other attribute values, and at most 2 classes per compound', () => {
    fc.assert(
      fc.property(fc.array(shape, { minLength: 1, maxLength: 4 }), (shapes) => {
        const { root } = toTree(shapes);
        const index = indexSnapshot(root);
        for (const nodeId of index.keys()) {
          const selector = selectorOf(index, nodeId) ?? '';
          expect(selector).not.toContain(MARKER);
          for (const compound of selector.split(' > ')) {
            expect(compound.split('.').length - 1).toBeLessThanOrEqual(2);
          }
        }
      }),
    );
  });
});
