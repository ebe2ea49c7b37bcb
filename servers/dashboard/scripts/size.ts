/**
 * The dashboard's first-load budget: `pnpm --filter @svc/dashboard size`. Builds the app when
 * stale, then gzips (level 9) what its `index.html` loads before anything renders: the entry
 * script, the modules it preloads and the stylesheets. Lazy chunks (pages loaded when opened:
 * the replay player, the charts) are listed without a budget. Prints a markdown table; exits 1
 * above the budget.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { buildIfStale } from './build-if-stale.ts';

const FIRST_LOAD_BUDGET = 110 * 1024;

const dist = fileURLToPath(new URL('../dist/', import.meta.url));

function gzipped(bytes: Buffer): number {
  return gzipSync(bytes, { level: 9 }).length;
}

function kilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** The asset paths `index.html` loads at once: scripts, module preloads, stylesheets. */
function firstLoadAssets(html: string): string[] {
  const assets = new Set<string>();
  for (const match of html.matchAll(/<(?:script|link)\b[^>]*>/g)) {
    const tag = match[0];
    const isScript = tag.startsWith('<script') && /\btype="module"/.test(tag);
    const isPreload = /\brel="(?:modulepreload|stylesheet)"/.test(tag);
    const url = /\b(?:src|href)="(\/assets\/[^"]+)"/.exec(tag)?.[1];
    if (url !== undefined && (isScript || isPreload)) assets.add(url.slice(1));
  }
  return [...assets];
}

await buildIfStale();
const html = await readFile(join(dist, 'index.html'), 'utf8');
const first = firstLoadAssets(html);
if (first.length === 0) throw new Error('dist/index.html loads no asset: is the build broken?');
let total = 0;
const rows: string[] = [];
for (const asset of first) {
  const size = gzipped(await readFile(join(dist, asset)));
  total += size;
  rows.push(`| ${asset} | first load | ${kilobytes(size)} |`);
}
for (const file of (await readdir(join(dist, 'assets'))).sort()) {
  const asset = `assets/${file}`;
  if (first.includes(asset) || file.endsWith('.map')) continue;
  rows.push(`| ${asset} | lazy | ${kilobytes(gzipped(await readFile(join(dist, asset))))} |`);
}
const within = total <= FIRST_LOAD_BUDGET;
process.stdout.write(
  [
    '| Asset | When | gzip -9 |',
    '| --- | --- | ---: |',
    ...rows,
    `| **First load (JS and CSS)** | budget ${kilobytes(FIRST_LOAD_BUDGET)} | **${kilobytes(total)}** ${within ? '✓' : '✗ over budget'} |`,
    '',
  ].join('\n'),
);
if (!within) process.exitCode = 1;
