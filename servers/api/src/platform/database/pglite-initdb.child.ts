import { newPGlite } from './pglite-instance.ts';

// Creates a PGlite data directory, then exits (see pglite-initdb.ts).
// Run: node pglite-initdb.child.ts <directory>

const [directory] = process.argv.slice(2);
if (directory === undefined) {
  process.stderr.write('usage: pglite-initdb.child.ts <directory>\n');
  process.exit(2);
}
const pglite = newPGlite(directory);
await pglite.waitReady;
await pglite.close();
