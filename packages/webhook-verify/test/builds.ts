/**
 * The two builds, for `describe.each`: the Node build (`src/index.ts`, what the `@svc/source`
 * and `node` conditions resolve) and the WebCrypto build (`src/web.ts`, imported directly).
 */
import * as nodeBuild from '../src/index.ts';
import * as webBuild from '../src/web.ts';

export type Build = typeof nodeBuild;

// The WebCrypto build must have exactly the Node build's API (a compile-time check).
const sameApi: Build = webBuild;
const sameApiBack: typeof webBuild = nodeBuild;
void sameApi;
void sameApiBack;

export const builds: ReadonlyArray<readonly [name: 'node' | 'web', build: Build]> = [
  ['node', nodeBuild],
  ['web', webBuild],
];
