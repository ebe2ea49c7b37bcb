/**
 * The browser SDK's size budgets, next to anchors measured in the same run the same way
 * (esbuild: bundled, minified, ESM, browser, es2022; each file gzipped at level 9):
 * `pnpm --filter @svc/browser-sdk size`. Prints a markdown table; exits 1 when a budget is
 * exceeded or cannot be measured (its chunk is missing).
 *
 * Groups, from esbuild's metafile of one code-split build of `src/index.ts`:
 * - core: the entry chunk plus the chunks it imports statically (what `init` costs on load);
 * - recorder path: core plus the chunk of `src/recorder/index.ts` and its static imports, a chunk
 *   shared by both counted once (what a recording page loads);
 * - WebRTC collector: the chunk of `src/webrtc/index.ts` and its static imports, chunks it shares
 *   with the core included (a bundler could not load it without them).
 * Other lazy chunks (the `pako` fallback for browsers without `CompressionStream`) are listed,
 * without a budget.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type BuildOptions, build, formatMessages, type Message, type Metafile } from 'esbuild';

const packageDirectory = resolve(import.meta.dirname, '..');
const CORE_ENTRY = 'src/index.ts';
const RECORDER_ENTRY = 'src/recorder/index.ts';
const WEBRTC_ENTRY = 'src/webrtc/index.ts';
/** Inputs that must never reach the core group: the lazy entries and the recorder library. */
const NOT_IN_CORE = [RECORDER_ENTRY, WEBRTC_ENTRY, '/@rrweb/'];

interface Budget {
  readonly label: string;
  readonly bytes: number;
}
const BUDGETS = {
  core: { label: 'Core loader (init, track, transport, governor; no recorder)', bytes: 8 * 1024 },
  // 30 KB until insights: the page load's `nav` event (core) and the click offsets and document
  // height on rrweb events (recorder), +129 B measured (README "Size" says why). 30.1 KB (30,822 B)
  // until the synchronous seal at exit (plain JSON chunks kept in sessionStorage and sent with
  // keepalive, seqs taken when a seal starts): +379 B measured, 297 B over, so 30,822 + 297 + 64.
  // 31,183 B until monthly caps: `recording.paused` from the configuration, no new session while
  // paused, a 429 with X-Service-Quota ending the session, no events kept after it: +72 B measured
  // in the core, 56 B over, so 31,239 + 64 (README "Size").
  recorder: { label: 'Core plus recorder path', bytes: 31_303 },
  // 10 KB until the collector took the project's configuration live, device labels, every ICE
  // restart and every data channel state (+360 B measured; README "Size" says why it stays).
  webrtc: { label: 'WebRTC collector chunk (detectors and score included)', bytes: 10.4 * 1024 },
} as const satisfies Record<string, Budget>;

/** An anchor: an entry source an application would write, bundled with this package's installs. */
const ANCHORS = [
  {
    label: '`@rrweb/record` (`record`)',
    source: "import { record } from '@rrweb/record';\nrecord({ emit: (event) => console.log(event) });\n",
  },
  {
    label: 'Sentry with replay (`@sentry/browser` 11.12.0, `replayIntegration()`)',
    source: [
      "import { init, replayIntegration } from '@sentry/browser';",
      "init({ dsn: 'https://key@o0.ingest.sentry.io/0', integrations: [replayIntegration()] });",
      '',
    ].join('\n'),
  },
  {
    label: 'OpenReplay (`@openreplay/tracker` 19.0.1, `new Tracker`)',
    source: [
      "import Tracker from '@openreplay/tracker';",
      "const tracker = new Tracker({ projectKey: 'project-key' });",
      'tracker.start();',
      '',
    ].join('\n'),
  },
  {
    label: 'PostHog (`posthog-js` 1.449.2, `posthog.init`)',
    source: [
      "import posthog from 'posthog-js';",
      "posthog.init('phc_key', { api_host: 'https://eu.i.posthog.com' });",
      '',
    ].join('\n'),
  },
] as const;
/**
 * PostHog's session recorder is not bundled into `posthog-js`: the SDK loads this prebuilt,
 * minified file (`/static/lazy-recorder.js`) when recording starts, so it is gzipped as is.
 */
const POSTHOG_RECORDER = 'node_modules/posthog-js/dist/lazy-recorder.js';

interface Row {
  /** A budget of this SDK, another lazy chunk of it (no budget), or an anchor. */
  readonly kind: 'budget' | 'lazy' | 'anchor';
  readonly label: string;
  readonly gzipBytes: number | null;
  readonly budget?: Budget;
  readonly note?: string;
}

interface Bundle {
  /** The metafile's outputs, keyed by their path relative to the build's working directory. */
  readonly outputs: Metafile['outputs'];
  readonly gzipBytes: ReadonlyMap<string, number>;
}

/** A metafile input or entry point, without the package manager's store prefix. */
/** This package's version, defined into the bundle as the published build does. */
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const displayName = (input: string) => input.replace(/^.*node_modules\//, '');
const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const bytesText = (bytes: number) => `${bytes.toLocaleString('en-US')} B`;

/** Bundles `entryPoints` the way every row is measured and gzips each output file at level 9. */
async function bundle(
  entryPoints: readonly string[],
  workingDirectory: string,
  outputDirectory: string,
  extra: Pick<BuildOptions, 'conditions' | 'nodePaths'> = {},
): Promise<Bundle> {
  const result = await build({
    entryPoints: [...entryPoints],
    absWorkingDir: workingDirectory,
    outdir: outputDirectory,
    bundle: true,
    minify: true,
    format: 'esm',
    splitting: true,
    platform: 'browser',
    target: 'es2022',
    metafile: true,
    write: false,
    logLevel: 'silent',
    // As tsup builds the package (tsup.config.ts): the version is a literal.
    define: { __SVC_SDK_VERSION__: JSON.stringify(PACKAGE_VERSION) },
    ...extra,
  });
  const gzipBytes = new Map<string, number>();
  for (const file of result.outputFiles) {
    gzipBytes.set(relative(workingDirectory, file.path), gzipSync(file.contents, { level: 9 }).byteLength);
  }
  return { outputs: result.metafile.outputs, gzipBytes };
}

/** The output whose entry point is `entry` (a build entry or a dynamically imported module). */
function chunkOf(built: Bundle, entry: string): string | undefined {
  return Object.entries(built.outputs).find(([, output]) => output.entryPoint === entry)?.[0];
}

/** `chunk` and every chunk it imports statically, transitively. */
function staticClosure(built: Bundle, chunk: string, into = new Set<string>()): Set<string> {
  if (into.has(chunk)) return into;
  into.add(chunk);
  for (const imported of built.outputs[chunk]?.imports ?? []) {
    if (imported.kind === 'import-statement' && imported.external !== true) {
      staticClosure(built, imported.path, into);
    }
  }
  return into;
}

function gzipTotal(built: Bundle, chunks: Iterable<string>): number {
  let total = 0;
  for (const chunk of chunks) total += built.gzipBytes.get(chunk) ?? 0;
  return total;
}

function inputsOf(built: Bundle, chunks: Iterable<string>): string[] {
  return [...chunks].flatMap((chunk) => Object.keys(built.outputs[chunk]?.inputs ?? {}));
}

/** The three budget rows, from one code-split build of the SDK, plus its other lazy chunks. */
async function measureSdk(outputDirectory: string): Promise<{ rows: Row[]; problems: string[] }> {
  const built = await bundle([CORE_ENTRY], packageDirectory, outputDirectory, {
    conditions: ['@svc/source'],
  });
  const rows: Row[] = [];
  const problems: string[] = [];

  const coreChunk = chunkOf(built, CORE_ENTRY);
  if (coreChunk === undefined) throw new Error(`esbuild produced no chunk for ${CORE_ENTRY}`);
  const core = staticClosure(built, coreChunk);
  const coreInputs = inputsOf(built, core);
  const leaked = coreInputs.filter((input) => NOT_IN_CORE.some((pattern) => input.includes(pattern)));
  if (leaked.length > 0) {
    problems.push(`the core loads lazy code statically: ${leaked.map(displayName).join(', ')}`);
  }
  rows.push({
    kind: 'budget',
    label: BUDGETS.core.label,
    gzipBytes: gzipTotal(built, core),
    budget: BUDGETS.core,
    note: core.size > 1 ? `entry + ${core.size - 1} shared chunk(s)` : 'entry chunk',
  });

  const recorderChunk = chunkOf(built, RECORDER_ENTRY);
  if (recorderChunk === undefined) {
    const reason = existsSync(join(packageDirectory, RECORDER_ENTRY))
      ? `${RECORDER_ENTRY} exists but is not a lazy chunk: ${CORE_ENTRY} must \`import()\` it`
      : `${RECORDER_ENTRY} does not exist yet`;
    problems.push(`the recorder path budget cannot be measured: ${reason}`);
    rows.push({
      kind: 'budget',
      label: BUDGETS.recorder.label,
      gzipBytes: null,
      budget: BUDGETS.recorder,
      note: reason,
    });
  } else {
    const recorderPath = staticClosure(built, recorderChunk, new Set(core));
    rows.push({
      kind: 'budget',
      label: BUDGETS.recorder.label,
      gzipBytes: gzipTotal(built, recorderPath),
      budget: BUDGETS.recorder,
      note: `core + ${kilobytes(gzipTotal(built, recorderPath) - gzipTotal(built, core))} loaded on demand`,
    });
  }

  const webrtcChunk = chunkOf(built, WEBRTC_ENTRY);
  if (webrtcChunk === undefined) {
    const reason = `${WEBRTC_ENTRY} is not a lazy chunk: ${CORE_ENTRY} must \`import()\` it`;
    problems.push(`the WebRTC budget cannot be measured: ${reason}`);
    rows.push({
      kind: 'budget',
      label: BUDGETS.webrtc.label,
      gzipBytes: null,
      budget: BUDGETS.webrtc,
      note: reason,
    });
  } else {
    const webrtc = staticClosure(built, webrtcChunk);
    const shared = [...webrtc].filter((chunk) => core.has(chunk));
    rows.push({
      kind: 'budget',
      label: BUDGETS.webrtc.label,
      gzipBytes: gzipTotal(built, webrtc),
      budget: BUDGETS.webrtc,
      note:
        shared.length > 0
          ? `includes ${bytesText(gzipTotal(built, shared))} of chunk(s) shared with the core`
          : 'shares no chunk with the core',
    });
  }

  // Every other lazy chunk, listed so that a new one is seen (the pako fallback today).
  const measured = new Set([coreChunk, recorderChunk, webrtcChunk]);
  for (const [chunk, output] of Object.entries(built.outputs)) {
    if (output.entryPoint === undefined || measured.has(chunk)) continue;
    const closure = [...staticClosure(built, chunk)].filter((each) => !core.has(each));
    const name = displayName(output.entryPoint);
    rows.push({
      kind: 'lazy',
      label: `Other lazy chunk: \`${name}\``,
      gzipBytes: gzipTotal(built, closure),
      note: name.startsWith('pako/') ? 'only where `CompressionStream` is missing' : 'no budget',
    });
  }
  return { rows, problems };
}

/** Each anchor in its own build (no chunk shared between them): its entry and static imports. */
async function measureAnchors(temporaryDirectory: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [index, anchor] of ANCHORS.entries()) {
    const directory = join(temporaryDirectory, `anchor-${index}`);
    const entry = join(directory, 'entry.js');
    await mkdir(directory, { recursive: true });
    await writeFile(entry, anchor.source);
    const built = await bundle(['entry.js'], directory, join(directory, 'out'), {
      nodePaths: [join(packageDirectory, 'node_modules')],
    });
    const entryChunk = chunkOf(built, 'entry.js');
    if (entryChunk === undefined) throw new Error(`esbuild produced no chunk for the anchor ${anchor.label}`);
    const initial = staticClosure(built, entryChunk);
    const lazy = [...built.gzipBytes.keys()].filter((chunk) => !initial.has(chunk));
    rows.push({
      kind: 'anchor',
      label: anchor.label,
      gzipBytes: gzipTotal(built, initial),
      note: lazy.length > 0 ? `+ ${kilobytes(gzipTotal(built, lazy))} in lazy chunks` : undefined,
    });
  }
  const recorder = join(packageDirectory, POSTHOG_RECORDER);
  if (existsSync(recorder)) {
    rows.push({
      kind: 'anchor',
      label: "PostHog's recorder (`posthog-js/dist/lazy-recorder.js`, loaded when recording starts)",
      gzipBytes: gzipSync(await readFile(recorder), { level: 9 }).byteLength,
      note: 'prebuilt and minified by PostHog; gzipped as is',
    });
  } else {
    rows.push({
      kind: 'anchor',
      label: "PostHog's recorder",
      gzipBytes: null,
      note: `not found: ${POSTHOG_RECORDER}`,
    });
  }
  return rows;
}

function table(rows: readonly Row[]): string {
  const lines = ['| Bundle | gzip -9 | Budget | Result | Note |', '| --- | ---: | ---: | --- | --- |'];
  for (const row of rows) {
    const measured =
      row.gzipBytes === null ? 'missing' : `${kilobytes(row.gzipBytes)} (${bytesText(row.gzipBytes)})`;
    const budget = row.budget === undefined ? '' : `${kilobytes(row.budget.bytes)}`;
    const result =
      row.budget === undefined
        ? row.kind
        : row.gzipBytes === null
          ? 'FAIL (missing)'
          : row.gzipBytes <= row.budget.bytes
            ? 'pass'
            : 'FAIL';
    lines.push(`| ${row.label} | ${measured} | ${budget} | ${result} | ${row.note ?? ''} |`);
  }
  return lines.join('\n');
}

/** esbuild's failures carry structured messages; print them as esbuild would. */
async function describe(error: unknown): Promise<string> {
  if (error instanceof Error && 'errors' in error && Array.isArray(error.errors) && error.errors.length > 0) {
    const formatted = await formatMessages(error.errors as Message[], { kind: 'error', color: false });
    return `esbuild failed:\n${formatted.join('\n')}`;
  }
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

const temporaryDirectory = await mkdtemp(join(tmpdir(), 'browser-sdk-size-'));
try {
  const sdk = await measureSdk(join(temporaryDirectory, 'sdk'));
  const anchors = await measureAnchors(temporaryDirectory);
  const rows = [...sdk.rows, ...anchors];
  console.log(table(rows));
  console.log(
    '\nesbuild (bundle, minify, ESM, browser, es2022), each output file gzipped at level 9; KB = 1,024 B.',
  );

  const over = rows.filter(
    (row) => row.budget !== undefined && row.gzipBytes !== null && row.gzipBytes > row.budget.bytes,
  );
  const problems = [
    ...sdk.problems,
    ...over.map(
      (row) =>
        `over budget: ${row.label}: ${bytesText(row.gzipBytes ?? 0)} > ${bytesText(row.budget?.bytes ?? 0)}`,
    ),
  ];
  if (problems.length > 0) {
    console.error(`\nSize check failed:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
    process.exitCode = 1;
  }
} catch (error) {
  console.error(await describe(error));
  process.exitCode = 1;
} finally {
  await rm(temporaryDirectory, { recursive: true, force: true });
}
