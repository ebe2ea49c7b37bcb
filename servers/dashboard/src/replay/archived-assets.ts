import type { StoredChunk, WireEvent } from './types.ts';

// Archived assets in the player (servers/api/README.md, Archived assets): the session's asset map
// (`GET /v1/sessions/{id}/assets`, or a share link's) is loaded once, its archived contents are
// fetched through the same API, and every chunk's rrweb snapshots are rewritten before the
// Replayer sees them: a `<link rel="stylesheet">` of an archived stylesheet gets the archived
// text as rrweb's `_cssText` (the Replayer builds a `<style>` from it, as for a stylesheet it
// could read while recording), and the archived fonts and images replace the original URLs as
// `data:` URLs (what the dashboard's Content-Security-Policy allows for both). So the replay
// shows the site as it was, whatever the site serves now.

/** One element of `GET /v1/sessions/{id}/assets`. */
export interface SessionAsset {
  url: string;
  kind: 'stylesheet' | 'font' | 'image';
  archivedUrl: string | null;
  status: 'archived' | 'failed' | 'refused';
}

/** What the rewriting uses: by original URL, a stylesheet's text and a file's `data:` URL. */
export interface ArchivedAssets {
  stylesheets: ReadonlyMap<string, string>;
  files: ReadonlyMap<string, string>;
}

const NOTHING: ArchivedAssets = { stylesheets: new Map(), files: new Map() };
/** `@import`s inlined into an archived stylesheet at most this deep. */
const MAX_IMPORT_DEPTH = 3;

/** `url(...)` with its argument quoted or not, and `@import "..."`; as the server reads them. */
const URL_FUNCTION = /url\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|([^'")\s]*))\s*\)/gi;
const IMPORT = /@import\s+(?:url\(\s*)?(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')\s*\)?[^;]*;/gi;

function dataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** `css` with each `url()` whose argument `lookup` maps replaced by the mapped URL. */
function replaceUrls(css: string, lookup: (url: string) => string | undefined): string {
  return css.replace(URL_FUNCTION, (whole, double?: string, single?: string, bare?: string) => {
    const mapped = lookup((double ?? single ?? bare ?? '').trim());
    return mapped === undefined ? whole : `url("${mapped}")`;
  });
}

/**
 * Fetches the archived contents of a session's asset map: `fetchArchived` gets an `archivedUrl`
 * (with the dashboard's credentials, or none for a share link). What fails to load is left out:
 * the replay then uses the original URL, as without an archive.
 *
 * @example
 * ```ts
 * const archived = await loadArchivedAssets(map.assets, (path) => fetch(path));
 * ```
 */
export async function loadArchivedAssets(
  assets: readonly SessionAsset[],
  fetchArchived: (archivedUrl: string) => Promise<Response>,
): Promise<ArchivedAssets> {
  const archived = assets.filter(
    (asset): asset is SessionAsset & { archivedUrl: string } =>
      asset.status === 'archived' && asset.archivedUrl !== null,
  );
  const get = async (archivedUrl: string) => {
    const response = await fetchArchived(archivedUrl).catch(() => undefined);
    return response?.ok === true ? response : undefined;
  };
  // Fonts and images first: the stylesheets (as the server rewrote them) name their archived URLs.
  const files = new Map<string, string>();
  const filesByArchivedUrl = new Map<string, string>();
  await Promise.all(
    archived
      .filter((asset) => asset.kind !== 'stylesheet')
      .map(async (asset) => {
        const response = await get(asset.archivedUrl);
        if (response === undefined) return;
        const url = await dataUrl(await response.blob());
        files.set(asset.url, url);
        filesByArchivedUrl.set(asset.archivedUrl, url);
      }),
  );
  const texts = new Map<string, string>();
  await Promise.all(
    archived
      .filter((asset) => asset.kind === 'stylesheet')
      .map(async (asset) => {
        const response = await get(asset.archivedUrl);
        if (response !== undefined) texts.set(asset.archivedUrl, await response.text());
      }),
  );
  // An @import of another archived stylesheet is inlined (the CSP allows no blob: stylesheet).
  const resolve = (text: string, depth: number): string =>
    replaceUrls(
      text.replace(IMPORT, (whole, double?: string, single?: string) => {
        const imported = texts.get(double ?? single ?? '');
        return imported === undefined || depth >= MAX_IMPORT_DEPTH ? whole : resolve(imported, depth + 1);
      }),
      (url) => filesByArchivedUrl.get(url),
    );
  const stylesheets = new Map<string, string>();
  for (const asset of archived) {
    const text = texts.get(asset.archivedUrl);
    if (asset.kind === 'stylesheet' && text !== undefined) stylesheets.set(asset.url, resolve(text, 0));
  }
  return { stylesheets, files };
}

interface SerializedNode {
  type?: number;
  tagName?: string;
  attributes?: Record<string, unknown>;
  childNodes?: SerializedNode[];
  textContent?: unknown;
  isStyle?: boolean;
}

const isStylesheetLink = (attributes: Record<string, unknown>) =>
  typeof attributes.rel === 'string' && attributes.rel.toLowerCase().split(/\s+/).includes('stylesheet');

/** Rewrites one serialized node and its subtree in place. */
function rewriteNode(root: SerializedNode, archived: ArchivedAssets): void {
  const lookup = (url: string) => archived.files.get(url);
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as SerializedNode;
    if (typeof node !== 'object' || node === null) continue;
    const attributes = node.attributes;
    if (node.type === 2 && typeof node.tagName === 'string' && attributes !== undefined) {
      const tag = node.tagName.toLowerCase();
      if (tag === 'link' && isStylesheetLink(attributes) && typeof attributes.href === 'string') {
        const css = archived.stylesheets.get(attributes.href);
        // A stylesheet rrweb read while recording keeps that text: it is what the page had.
        if (css !== undefined && typeof attributes._cssText !== 'string') attributes._cssText = css;
      }
      if (typeof attributes._cssText === 'string')
        attributes._cssText = replaceUrls(attributes._cssText, lookup);
      if (tag === 'img' && typeof attributes.src === 'string') {
        const file = archived.files.get(attributes.src);
        if (file !== undefined) attributes.src = file;
      }
    }
    if (node.type === 3 && node.isStyle === true && typeof node.textContent === 'string')
      node.textContent = replaceUrls(node.textContent, lookup);
    if (Array.isArray(node.childNodes)) stack.push(...node.childNodes);
  }
}

/**
 * The chunk with its rrweb full snapshots and added nodes rewritten through `archived` (the
 * events are copied; the chunk given is not changed).
 *
 * @example
 * ```ts
 * const chunk = withArchivedAssets(await loadChunk(seq), archived);
 * ```
 */
export function withArchivedAssets(chunk: StoredChunk, archived: ArchivedAssets): StoredChunk {
  if (archived.stylesheets.size === 0 && archived.files.size === 0) return chunk;
  const events = chunk.events.map((event): WireEvent => {
    const data = event.data as
      | {
          type?: number;
          data?: { node?: SerializedNode; source?: number; adds?: Array<{ node?: SerializedNode }> };
        }
      | undefined;
    const isSnapshot = data?.type === 2 && data.data?.node !== undefined;
    const isMutation = data?.type === 3 && data.data?.source === 0 && Array.isArray(data.data.adds);
    if (event.type !== 'rrweb' || (!isSnapshot && !isMutation)) return event;
    const copy = structuredClone(event) as WireEvent & { data: NonNullable<typeof data> };
    if (isSnapshot && copy.data.data?.node !== undefined) rewriteNode(copy.data.data.node, archived);
    for (const added of copy.data.data?.adds ?? [])
      if (added.node !== undefined) rewriteNode(added.node, archived);
    return copy;
  });
  return { ...chunk, events };
}

/**
 * `loadChunk` with the session's archived assets applied: the map and its contents are loaded
 * once, with the first chunk; without a map (an older server, an error) chunks come as they are.
 *
 * @example
 * ```ts
 * const load = archivingLoader(loadChunk, async () => loadArchivedAssets((await api('GET', mapUrl)).assets, fetchArchived));
 * ```
 */
export function archivingLoader(
  loadChunk: (seq: number) => Promise<StoredChunk>,
  loadAssets: () => Promise<ArchivedAssets>,
): (seq: number) => Promise<StoredChunk> {
  let assets: Promise<ArchivedAssets> | undefined;
  return async (seq) => {
    assets ??= loadAssets().catch(() => NOTHING);
    const [chunk, archived] = await Promise.all([loadChunk(seq), assets]);
    return withArchivedAssets(chunk, archived);
  };
}
