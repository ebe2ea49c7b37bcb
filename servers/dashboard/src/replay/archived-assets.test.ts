import { describe, expect, it } from 'vitest';
import { withArchivedAssets } from './archived-assets.ts';
import type { StoredChunk } from './types.ts';

const archived = {
  stylesheets: new Map([
    ['https://shop.example.com/site.css', 'h1 { color: red; background: url("data:image/png;base64,AA") }'],
  ]),
  files: new Map([
    ['https://shop.example.com/logo.png', 'data:image/png;base64,AA'],
    ['https://shop.example.com/bg.png', 'data:image/png;base64,BB'],
  ]),
};

const link = (href: string, extra: Record<string, string> = {}) => ({
  type: 2,
  tagName: 'link',
  attributes: { rel: 'stylesheet', href, ...extra },
  childNodes: [],
  id: 3,
});

function chunkOf(nodes: unknown[]): StoredChunk {
  return {
    seq: 0,
    events: [
      { t: 1, type: 'nav', url: 'https://shop.example.com/' },
      {
        t: 2,
        type: 'rrweb',
        data: {
          type: 2,
          data: {
            node: {
              type: 0,
              id: 1,
              childNodes: [{ type: 2, tagName: 'head', attributes: {}, id: 2, childNodes: nodes }],
            },
          },
        },
      },
      {
        t: 3,
        type: 'rrweb',
        data: {
          type: 3,
          data: {
            source: 0,
            adds: [
              {
                parentId: 2,
                node: {
                  type: 2,
                  tagName: 'img',
                  attributes: { src: 'https://shop.example.com/logo.png' },
                  childNodes: [],
                  id: 9,
                },
              },
            ],
            removes: [],
            texts: [],
            attributes: [],
          },
        },
      },
    ],
  };
}

interface TestNode {
  attributes: Record<string, string>;
  childNodes: Array<{ textContent: string }>;
}

/** The head's children of the chunk's full snapshot. */
function nodesOf(chunk: StoredChunk): TestNode[] {
  const data = chunk.events[1]?.data as { data: { node: { childNodes: Array<{ childNodes: TestNode[] }> } } };
  return data.data.node.childNodes[0]?.childNodes ?? [];
}

describe('withArchivedAssets', () => {
  it('inlines an archived stylesheet as _cssText and replaces archived images, in snapshots and added nodes', () => {
    const chunk = chunkOf([
      link('https://shop.example.com/site.css'),
      link('https://elsewhere.example/other.css'),
      {
        type: 2,
        tagName: 'style',
        attributes: {},
        id: 4,
        childNodes: [
          {
            type: 3,
            isStyle: true,
            textContent: 'a { background: url(https://shop.example.com/bg.png) }',
            id: 5,
          },
        ],
      },
    ]);
    const rewritten = withArchivedAssets(chunk, archived);
    const [archivedLink, other, style] = nodesOf(rewritten);
    expect(archivedLink?.attributes._cssText).toBe(
      archived.stylesheets.get('https://shop.example.com/site.css'),
    );
    expect(other?.attributes._cssText).toBeUndefined();
    expect(style?.childNodes[0]?.textContent).toBe('a { background: url("data:image/png;base64,BB") }');
    const mutation = rewritten.events[2]?.data as {
      data: { adds: Array<{ node: { attributes: { src: string } } }> };
    };
    const added = mutation.data.adds[0];
    expect(added?.node.attributes.src).toBe('data:image/png;base64,AA');
    // The chunk given is not changed.
    expect(nodesOf(chunk)[0]?.attributes._cssText).toBeUndefined();
    expect(rewritten.events[0]).toBe(chunk.events[0]);
  });

  it('keeps the text rrweb read while recording, with its archived urls replaced', () => {
    const chunk = chunkOf([
      link('https://shop.example.com/site.css', {
        _cssText: 'b { background: url(https://shop.example.com/bg.png) }',
      }),
    ]);
    expect(nodesOf(withArchivedAssets(chunk, archived))[0]?.attributes._cssText).toBe(
      'b { background: url("data:image/png;base64,BB") }',
    );
  });

  it('returns the chunk itself when nothing is archived', () => {
    const chunk = chunkOf([link('https://shop.example.com/site.css')]);
    expect(withArchivedAssets(chunk, { stylesheets: new Map(), files: new Map() })).toBe(chunk);
  });
});
