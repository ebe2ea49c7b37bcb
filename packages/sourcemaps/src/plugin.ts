import { readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { injectFiles } from './directory.ts';
import { SourcemapsError } from './errors.ts';
import { type UploadFile, type UploadResult, uploadSourcemaps } from './upload.ts';

// The Vite / Rollup plugin. Everything happens in `writeBundle`, on the files as written: Vite's
// own `generateBundle` hooks still rewrite chunks and regenerate their maps after the plugins'
// (module preload lists), so a debug id added earlier could be lost from a map.

export interface SvcSourcemapsOptions {
  /** The service's base URL, e.g. `https://svc.example.com`. */
  url: string;
  /** An API token of the project with the scope `sourcemaps:write`. Without one, nothing is uploaded (a warning). */
  token: string | undefined;
  /** The release of the build (e.g. `shop@1.4.0`, a commit SHA). Optional: debug ids find the maps without it. */
  release?: string;
  /**
   * Where the output directory is served. Default: from Vite's `base`: `~` + a path base (`/` gives
   * `~/`, any origin), a full URL base as is; `~/` under Rollup or a relative base.
   */
  urlPrefix?: string;
  /** Delete the `.map` files once uploaded, so they are not deployed (default false). */
  deleteAfterUpload?: boolean;
  /** `'warn'` logs a failed upload instead of failing the build (default `'error'`). */
  onUploadError?: 'error' | 'warn';
  /** Called with the result of each upload (one per output directory). */
  onUploaded?: (result: UploadResult) => void;
  /** Passed to the upload (tests, proxies). */
  fetch?: typeof fetch;
}

/** The part of Rollup's and Vite's plugin context the plugin uses. */
interface PluginContext {
  warn(message: string): void;
  error(message: string): never;
}

/** The part of an output chunk or asset the plugin reads. */
interface OutputFile {
  type: 'chunk' | 'asset';
  fileName: string;
  sourcemapFileName?: string | null;
}

/** A Rollup plugin that is also a Vite plugin (`apply` and `config` are Vite's, ignored by Rollup). */
export interface SvcSourcemapsPlugin {
  name: 'svc-sourcemaps';
  apply: 'build';
  enforce: 'post';
  config(configuration: { build?: { sourcemap?: unknown } }): { build: { sourcemap: 'hidden' } } | undefined;
  configResolved(configuration: { base?: string }): void;
  writeBundle(
    this: PluginContext,
    outputOptions: { dir?: string; file?: string },
    bundle: { [fileName: string]: OutputFile },
  ): Promise<void>;
}

/**
 * A Vite and Rollup plugin that gives every emitted bundle with a source map a debug id (in its
 * `//# debugId=` comment and its map's `debugId`), then uploads the bundles and maps to
 * `POST /v1/sourcemaps` once they are written. A failed upload fails the build with the server's
 * reason (or only warns, `onUploadError: 'warn'`); without a `token` it warns and uploads nothing.
 * Under Vite, a build without `build.sourcemap` gets hidden source maps (no `sourceMappingURL`).
 *
 * @example
 * ```ts
 * // vite.config.ts
 * import { svcSourcemaps } from '@svc/sourcemaps';
 *
 * export default defineConfig({
 *   build: { sourcemap: 'hidden' },
 *   plugins: [
 *     svcSourcemaps({ url: 'https://svc.example.com', token: process.env.SVC_API_TOKEN, release: process.env.GIT_SHA, deleteAfterUpload: true }),
 *   ],
 * });
 * ```
 */
export function svcSourcemaps(options: SvcSourcemapsOptions): SvcSourcemapsPlugin {
  let base: string | undefined;
  return {
    name: 'svc-sourcemaps',
    apply: 'build',
    enforce: 'post',
    config(configuration) {
      if (configuration.build?.sourcemap === undefined) return { build: { sourcemap: 'hidden' } };
      return undefined;
    },
    configResolved(configuration) {
      base = configuration.base;
    },
    async writeBundle(outputOptions, bundle) {
      const root = resolve(outputOptions.dir ?? dirname(outputOptions.file ?? '.'));
      const files: UploadFile[] = [];
      const maps: string[] = [];
      for (const output of Object.values(bundle)) {
        if (output.type !== 'chunk') continue;
        const map = output.sourcemapFileName ?? `${output.fileName}.map`;
        if (!(map in bundle)) continue;
        try {
          await injectFiles(root, { bundle: output.fileName, map });
        } catch (error) {
          this.error(`svc-sourcemaps: ${(error as Error).message}`);
        }
        files.push({ name: output.fileName, content: await readFile(join(root, output.fileName)) });
        files.push({ name: map, content: await readFile(join(root, map)) });
        maps.push(map);
      }
      if (files.length === 0) {
        this.warn(
          'svc-sourcemaps: no bundle has a source map file; enable build.sourcemap (or output.sourcemap)',
        );
        return;
      }
      if (options.token === undefined || options.token.trim() === '') {
        this.warn(
          `svc-sourcemaps: no token, so the source maps of ${files.length / 2} bundles were not uploaded`,
        );
        return;
      }
      try {
        const result = await uploadSourcemaps({
          url: options.url,
          token: options.token,
          ...(options.release === undefined ? {} : { release: options.release }),
          urlPrefix: options.urlPrefix ?? prefixOfBase(base),
          files,
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        });
        options.onUploaded?.(result);
      } catch (error) {
        const message = `svc-sourcemaps: ${SourcemapsError.isInstance(error) ? error.message : String(error)}`;
        if (options.onUploadError === 'warn') {
          this.warn(message);
          return;
        }
        this.error(message);
      }
      if (options.deleteAfterUpload === true)
        await Promise.all(maps.map((map) => rm(join(root, map), { force: true })));
    },
  };
}

function prefixOfBase(base: string | undefined): string {
  if (base?.startsWith('/')) return `~${base}`;
  if (base !== undefined && /^https?:\/\//.test(base)) return base;
  return '~/';
}
