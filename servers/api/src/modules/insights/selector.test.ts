import { describe, expect, it } from 'vitest';
import chunk from '../../../../../packages/protocol/fixtures/valid/Chunk/recording-seq-0.json' with {
  type: 'json',
};
import { indexSnapshot, selectorOf } from './index.ts';

function fullSnapshotNode(): unknown {
  const event = chunk.events.find(
    (candidate) => candidate.type === 'rrweb' && (candidate.data as { type?: unknown }).type === 2,
  );
  if (event === undefined) throw new Error('the fixture has no full snapshot');
  return (event.data as { data: { node: unknown } }).data.node;
}

let nextId = 100;
const element = (tagName: string, attributes: Record<string, unknown> = {}, childNodes: unknown[] = []) => ({
  type: 2,
  id: nextId++,
  tagName,
  attributes,
  childNodes,
});
const text = (textContent: string) => ({ type: 3, id: nextId++, textContent });
const page = (...children: unknown[]) => ({
  type: 0,
  id: nextId++,
  childNodes: [element('html', {}, [element('head'), element('body', {}, children)])],
});

describe('selectorOf on the recorded fixture', () => {
  const index = indexSnapshot(fullSnapshotNode());

  it.each([
    [13, 'header.topbar > button#leave'],
    [16, 'main.stage > video#remote'],
    [17, 'main.stage > video#local'],
    [19, 'form.chat > input'],
    [20, 'form.chat > button'],
    [21, 'form.chat > button'],
    [11, 'header.topbar > h1'],
    [7, 'head > title'],
    [9, 'body.theme-light'],
    [3, 'html'],
  ])('node %i is %s', (nodeId, selector) => {
    expect(selectorOf(index, nodeId)).toBe(selector);
  });

  it('indexes every node with its parent', () => {
    expect(index.get(1)?.parentId).toBeNull();
    expect(index.get(3)?.parentId).toBe(1);
    expect(index.get(21)?.parentId).toBe(20);
    expect(index.size).toBe(21);
  });

  it('has no selector for the document or an unknown node', () => {
    expect(selectorOf(index, 1)).toBeNull();
    expect(selectorOf(index, 999)).toBeNull();
  });
});

describe('selectorOf on synthetic trees', () => {
  it('adds :nth-of-type only where a sibling would match the same compound', () => {
    const first = element('button', { class: 'pay' });
    const second = element('button', { class: 'pay' });
    const other = element('button', { class: 'other' });
    const link = element('a', { class: 'pay' });
    const form = element('form', { id: 'checkout' }, [link, first, second, other]);
    const index = indexSnapshot(page(element('main', {}, [form])));
    expect(selectorOf(index, second.id)).toBe('main > form#checkout > button.pay:nth-of-type(2)');
    expect(selectorOf(index, first.id)).toBe('main > form#checkout > button.pay:nth-of-type(1)');
    expect(selectorOf(index, other.id)).toBe('main > form#checkout > button.other');
    expect(selectorOf(index, link.id)).toBe('main > form#checkout > a.pay');
  });

  it('uses at most the first 2 class names', () => {
    const wide = element('div', { class: '  card  shadow\tlarge ' });
    const narrow = element('div', { class: 'card shadow' });
    const index = indexSnapshot(page(wide, narrow));
    expect(selectorOf(index, wide.id)).toBe('div.card.shadow:nth-of-type(1)');
    expect(selectorOf(index, narrow.id)).toBe('div.card.shadow:nth-of-type(2)');
  });

  it('escapes identifiers as CSS.escape does', () => {
    const node = element('div', { id: '1st', class: 'w-1/2 -9' });
    expect(selectorOf(indexSnapshot(page(node)), node.id)).toBe('div#\\31 st.w-1\\/2.-\\39 ');
  });

  it('never uses text or attribute values other than id and class', () => {
    const input = element('input', {
      type: 'text',
      name: 'secret-name',
      value: 'secret-value',
      placeholder: 'secret',
    });
    const label = element('label', { 'data-secret': 'secret', title: 'secret' }, [text('secret text')]);
    const index = indexSnapshot(page(element('form', {}, [label, input])));
    expect(selectorOf(index, input.id)).toBe('form > input');
    expect(selectorOf(index, label.id)).toBe('form > label');
    expect(selectorOf(index, (label.childNodes[0] as { id: number }).id)).toBe('form > label');
  });

  it('skips what is not a node', () => {
    const button = element('button');
    const index = indexSnapshot(page(null, { type: 2 }, 'text', button));
    expect(selectorOf(index, button.id)).toBe('button');
  });
});
