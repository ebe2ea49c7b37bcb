#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { injectDirectory } from './directory.ts';
import { SourcemapsError } from './errors.ts';
import { readUploadFiles, uploadSourcemaps } from './upload.ts';

// svc-sourcemaps: debug ids and uploads for builds without the Vite/Rollup plugin (esbuild,
// webpack, tsc, anything that writes bundles and .map files to a directory).
// Exit codes: 0 done, 1 failed (nothing to do, the server refused, no answer), 2 usage.

const USAGE = `Usage:
  svc-sourcemaps inject <dir>
      Give every bundle (*.js, *.mjs, *.cjs) under <dir> that has a source map a debug id:
      a //# debugId= comment in the bundle and "debugId" in its map. Idempotent.

  svc-sourcemaps upload <dir> --url <url> --token <token> [--release <release>] [--url-prefix <prefix>]
                              [--delete-after-upload]
      Upload the bundles under <dir> that have a source map, and their maps, to POST /v1/sourcemaps.
      --url           the service, e.g. https://svc.example.com (default: $SVC_URL)
      --token         an API token with the scope sourcemaps:write (default: $SVC_API_TOKEN)
      --release       the release of the build, e.g. shop@1.4.0 or a commit SHA
      --url-prefix    where <dir> is served: ~/ (any origin, default), ~/static/, https://cdn.example.com/app/
      --delete-after-upload  delete the .map files once uploaded

Exit codes: 0 done, 1 failed, 2 usage.`;

class UsageError extends Error {}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      release: { type: 'string' },
      'url-prefix': { type: 'string' },
      'delete-after-upload': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  if (values.version === true) {
    console.log(version());
    return 0;
  }
  const [command, directory, ...rest] = positionals;
  if (command === undefined) throw new UsageError('No command');
  if (command !== 'inject' && command !== 'upload') throw new UsageError(`Unknown command "${command}"`);
  if (directory === undefined)
    throw new UsageError(`${command}: which directory? (svc-sourcemaps ${command} dist)`);
  if (rest.length > 0) throw new UsageError(`${command} takes one directory, not ${rest.join(' ')}`);

  if (command === 'inject') {
    if (values.url !== undefined || values.token !== undefined || values.release !== undefined)
      throw new UsageError('inject takes only a directory (--url, --token and --release are for upload)');
    const results = await injectDirectory(directory);
    for (const result of results) {
      if (result.status === 'skipped')
        console.log(
          `skipped   ${result.bundle} (${result.noMap === 'inline' ? 'inline source map' : 'no source map'})`,
        );
      else console.log(`${result.status.padEnd(9)} ${result.bundle} ${result.debugId}`);
    }
    const done = results.filter((result) => result.status !== 'skipped').length;
    if (done === 0) {
      console.error(`svc-sourcemaps: no bundle under ${directory} has a source map file`);
      return 1;
    }
    console.log(`${done} bundle${done === 1 ? '' : 's'} with a debug id`);
    return 0;
  }

  const url = values.url ?? process.env.SVC_URL;
  const token = values.token ?? process.env.SVC_API_TOKEN;
  if (url === undefined || url === '') throw new UsageError('upload: --url (or SVC_URL) is required');
  if (token === undefined || token === '')
    throw new UsageError(
      'upload: --token (or SVC_API_TOKEN) is required: an API token with the scope sourcemaps:write',
    );
  const { files, withoutDebugId, withoutMap } = await readUploadFiles(directory);
  for (const bundle of withoutMap) console.warn(`skipped   ${bundle} (no source map)`);
  if (files.length === 0) {
    console.error(`svc-sourcemaps: no bundle under ${directory} has a source map file; nothing uploaded`);
    return 1;
  }
  if (withoutDebugId.length > 0)
    console.warn(
      `svc-sourcemaps: ${withoutDebugId.length} bundle(s) carry no debug id (run svc-sourcemaps inject ${directory} first); they are found by release and URL only`,
    );
  const result = await uploadSourcemaps({
    url,
    token,
    ...(values.release === undefined ? {} : { release: values.release }),
    ...(values['url-prefix'] === undefined ? {} : { urlPrefix: values['url-prefix'] }),
    files,
  });
  for (const item of result.items)
    console.log(`uploaded  ${item.url}${item.debugId === undefined ? '' : ` ${item.debugId}`}`);
  console.log(
    `${result.items.length} files uploaded${result.release === undefined ? '' : ` for release ${result.release}`}`,
  );
  if (values['delete-after-upload'] === true) {
    const root = resolve(directory);
    const maps = files.filter((file) => file.name.endsWith('.map'));
    await Promise.all(maps.map((file) => rm(join(root, file.name), { force: true })));
    console.log(`${maps.length} source maps deleted`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`svc-sourcemaps: ${(error as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (SourcemapsError.isInstance(error)) {
      console.error(`svc-sourcemaps: ${error.message}`);
      process.exitCode = error.code === 'invalid_options' ? 2 : 1;
    } else {
      console.error(error);
      process.exitCode = 1;
    }
  },
);
