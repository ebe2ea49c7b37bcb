import type { AssetKind } from '../../platform/database/tables/assets.table.ts';

// What a session's snapshots reference: read from rrweb full snapshots (serialized nodes) and
// from stylesheets' text. Pure functions: no fetching here.

/** A URL to archive and what it is. */
export interface AssetReference {
  /** Absolute http(s) URL without its fragment. */
  url: string;
  kind: AssetKind;
}

/** rrweb's event type of a full snapshot, and its node types (rrweb-snapshot `NodeType`). */
const FULL_SNAPSHOT = 2;
const ELEMENT_NODE = 2;
const TEXT_NODE = 3;

interface SerializedNode {
  type?: unknown;
  tagName?: unknown;
  attributes?: Record<string, unknown>;
  childNodes?: unknown[];
  textContent?: unknown;
  isStyle?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `value` resolved against `base` as an absolute http(s) URL without its fragment, or undefined
 * (a `data:` URL, another scheme, or not a URL).
 *
 * @example
 * ```ts
 * resolveAssetUrl('../fonts/a.woff2#x', 'https://cdn.example.com/css/site.css'); // 'https://cdn.example.com/fonts/a.woff2'
 * resolveAssetUrl('data:font/woff2;base64,AAAA', 'https://example.com/'); // undefined
 * ```
 */
export function resolveAssetUrl(value: string, base: string | undefined): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > 2048) return undefined;
  let url: URL;
  try {
    url = base === undefined ? new URL(trimmed) : new URL(trimmed, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  return url.href;
}

/** `url(...)` with its argument quoted or not, and `@import "..."` (whose url() the first matches). */
const URL_FUNCTION = /url\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|([^'")\s]*))\s*\)/gi;
const IMPORT_STRING = /@import\s+(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')/gi;
const IMPORT_URL = /@import\s+url\(/gi;
const FONT_FACE = /@font-face\s*\{[^}]*\}/gi;
const COMMENT = /\/\*[\s\S]*?\*\//g;

/** The spans of `text` inside `@font-face { ... }` blocks. */
function fontFaceSpans(text: string): Array<[number, number]> {
  return [...text.matchAll(FONT_FACE)].map((match) => [match.index, match.index + match[0].length]);
}

/** The spans of `@import url(...)` functions' starts. */
function importUrlStarts(text: string): Set<number> {
  return new Set(
    [...text.matchAll(IMPORT_URL)].map((match) => match.index + match[0].length - 'url('.length),
  );
}

/**
 * What a stylesheet's text references, resolved against `base` (the stylesheet's own URL, or the
 * page's for an inline `<style>`): `@import`s are stylesheets, `url()`s inside `@font-face` are
 * fonts and every other `url()` an image. Comments are skipped; `data:` URLs are not references.
 *
 * @example
 * ```ts
 * cssReferences('@import "base.css"; @font-face { src: url(a.woff2) } body { background: url(/bg.png) }', 'https://example.com/css/site.css');
 * // [{ url: 'https://example.com/css/base.css', kind: 'stylesheet' },
 * //  { url: 'https://example.com/css/a.woff2', kind: 'font' },
 * //  { url: 'https://example.com/bg.png', kind: 'image' }]
 * ```
 */
export function cssReferences(css: string, base: string | undefined): AssetReference[] {
  // Comments become spaces of the same length, so the positions below stay those of `css`.
  const text = css.replace(COMMENT, (comment) => ' '.repeat(comment.length));
  const fonts = fontFaceSpans(text);
  const imports = importUrlStarts(text);
  const found: Array<{ index: number; reference: AssetReference }> = [];
  for (const match of text.matchAll(IMPORT_STRING)) {
    const url = resolveAssetUrl(unescapeCss(match[1] ?? match[2] ?? ''), base);
    if (url !== undefined) found.push({ index: match.index, reference: { url, kind: 'stylesheet' } });
  }
  for (const match of text.matchAll(URL_FUNCTION)) {
    const url = resolveAssetUrl(unescapeCss(match[1] ?? match[2] ?? match[3] ?? ''), base);
    if (url === undefined) continue;
    const kind: AssetKind = imports.has(match.index)
      ? 'stylesheet'
      : fonts.some(([start, end]) => match.index >= start && match.index < end)
        ? 'font'
        : 'image';
    found.push({ index: match.index, reference: { url, kind } });
  }
  return unique(found.sort((a, b) => a.index - b.index).map((entry) => entry.reference));
}

/** A CSS string's backslash escapes of quotes and backslashes undone (hex escapes are left as they are). */
function unescapeCss(value: string): string {
  return value.replace(/\\(["'\\])/g, '$1');
}

/**
 * `css` with each `url()` and `@import` string whose resolved URL `replacement` maps, replaced by
 * the mapped URL (quoted); everything else byte for byte as it was.
 *
 * @example
 * ```ts
 * rewriteCssUrls('a { background: url(bg.png) }', 'https://example.com/', (url) =>
 *   url === 'https://example.com/bg.png' ? '/v1/assets/ab12' : undefined);
 * // 'a { background: url("/v1/assets/ab12") }'
 * ```
 */
export function rewriteCssUrls(
  css: string,
  base: string | undefined,
  replacement: (url: string) => string | undefined,
): string {
  const swap = (whole: string, raw: string, build: (mapped: string) => string) => {
    const url = resolveAssetUrl(unescapeCss(raw), base);
    const mapped = url === undefined ? undefined : replacement(url);
    return mapped === undefined ? whole : build(mapped);
  };
  const quoted = (value: string) => `"${value.replace(/["\\\n]/g, (character) => `\\${character}`)}"`;
  return css
    .replace(IMPORT_STRING, (whole, double?: string, single?: string) =>
      swap(whole, double ?? single ?? '', (mapped) => `@import ${quoted(mapped)}`),
    )
    .replace(URL_FUNCTION, (whole, double?: string, single?: string, bare?: string) =>
      swap(whole, double ?? single ?? bare ?? '', (mapped) => `url(${quoted(mapped)})`),
    );
}

function unique(references: AssetReference[]): AssetReference[] {
  const seen = new Set<string>();
  return references.filter((reference) => {
    if (seen.has(reference.url)) return false;
    seen.add(reference.url);
    return true;
  });
}

/** Whether a `<link>` element's `rel` names a stylesheet. */
function isStylesheetLink(attributes: Record<string, unknown>): boolean {
  const rel = attributes.rel;
  return typeof rel === 'string' && rel.toLowerCase().split(/\s+/).includes('stylesheet');
}

/**
 * What a serialized snapshot tree references: `<link rel="stylesheet" href>`, `<img src>` (and
 * its `srcset`'s first candidate is not read: the replay shows `src`), and the `@import`s and
 * `url()`s of inline styles (a `<style>`'s text, rrweb's `_cssText` of a link or style it could
 * read). Relative URLs resolve against `base` (rrweb records them absolute already).
 *
 * @example
 * ```ts
 * snapshotReferences(fullSnapshot.data.node, 'https://shop.example.com/');
 * // [{ url: 'https://shop.example.com/site.css', kind: 'stylesheet' }, ...]
 * ```
 */
export function snapshotReferences(root: unknown, base: string | undefined): AssetReference[] {
  const found: AssetReference[] = [];
  const stack: unknown[] = [root];
  let visited = 0;
  while (stack.length > 0 && visited < 1_000_000) {
    const node = stack.pop() as SerializedNode;
    visited += 1;
    if (!isRecord(node)) continue;
    if (node.type === ELEMENT_NODE && typeof node.tagName === 'string' && isRecord(node.attributes)) {
      const tag = node.tagName.toLowerCase();
      const attributes = node.attributes;
      if (tag === 'link' && isStylesheetLink(attributes) && typeof attributes.href === 'string') {
        const url = resolveAssetUrl(attributes.href, base);
        if (url !== undefined) found.push({ url, kind: 'stylesheet' });
      }
      if (tag === 'img' && typeof attributes.src === 'string') {
        const url = resolveAssetUrl(attributes.src, base);
        if (url !== undefined) found.push({ url, kind: 'image' });
      }
      if (typeof attributes._cssText === 'string') {
        const sheetBase =
          tag === 'link' && typeof attributes.href === 'string'
            ? (resolveAssetUrl(attributes.href, base) ?? base)
            : base;
        found.push(...cssReferences(attributes._cssText, sheetBase));
      }
    }
    if (node.type === TEXT_NODE && node.isStyle === true && typeof node.textContent === 'string')
      found.push(...cssReferences(node.textContent, base));
    if (Array.isArray(node.childNodes)) {
      for (let index = node.childNodes.length - 1; index >= 0; index--) stack.push(node.childNodes[index]);
    }
  }
  return unique(found);
}

/**
 * The references of a chunk's wire events: each rrweb full snapshot's tree, resolved against the
 * page's URL (the last rrweb meta event's `href` before it).
 *
 * @example
 * ```ts
 * eventReferences(chunkEvents(bytes, chunk)); // [{ url: 'https://shop.example.com/site.css', kind: 'stylesheet' }]
 * ```
 */
export function eventReferences(events: readonly unknown[]): AssetReference[] {
  const found: AssetReference[] = [];
  let base: string | undefined;
  for (const event of events) {
    if (!isRecord(event) || event.type !== 'rrweb' || !isRecord(event.data)) continue;
    const rrweb = event.data;
    if (rrweb.type === 4 && isRecord(rrweb.data) && typeof rrweb.data.href === 'string')
      base = resolveAssetUrl(rrweb.data.href, undefined);
    if (rrweb.type === FULL_SNAPSHOT && isRecord(rrweb.data))
      found.push(...snapshotReferences(rrweb.data.node, base));
  }
  return unique(found);
}
