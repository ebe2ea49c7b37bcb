import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';

// The benchmark's baseline: a bare Fastify server (same Node, its own process) whose one route
// writes the request body to a new file, fsyncs it and fsyncs its directory, then answers 200.
// That is the floor under any durable ingest on this disk; the real server's ingest does this
// and more (inflate, validate, encrypt, rename, index in a transaction).
//
// Run: node bench/fsync-server.ts <port> <directory>. SIGTERM closes it.

const [portArgument, directory] = process.argv.slice(2);
if (portArgument === undefined || directory === undefined) {
  process.stderr.write('usage: fsync-server.ts <port> <directory>\n');
  process.exit(2);
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const fastify = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
fastify.removeAllContentTypeParsers();
fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
fastify.get('/healthz', async () => ({ ok: true }));
fastify.post('/v1/ingest', async (request) => {
  const body = request.body as Buffer;
  const handle = await open(join(directory, randomBytes(8).toString('hex')), 'wx', 0o600);
  try {
    await handle.writeFile(body);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await syncDirectory(directory);
  return { ok: true };
});

await fastify.listen({ host: '127.0.0.1', port: Number(portArgument) });
process.once('SIGTERM', () => {
  fastify.close().then(() => process.exit(0));
});
