// Source maps: uploads, and symbolication of minified frames.
// Other modules import this module only through this file (servers/api/README.md, Layout).

export { createSymbolicator, type Symbolicator } from './symbolicator.ts';
