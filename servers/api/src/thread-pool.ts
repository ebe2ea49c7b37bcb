// Imported first by the process entry (server.ts), before anything uses libuv's thread pool: libuv
// reads UV_THREADPOOL_SIZE once, when the pool starts. Every durable ingest waits on fsync calls,
// and each one holds a pool thread for the whole disk flush; with libuv's default of 4 threads,
// 16 concurrent uploads queue behind four flushes. The threads only wait on the disk, so more of
// them cost a little memory and no CPU. An operator's own UV_THREADPOOL_SIZE wins.

/** The pool size the server asks for unless UV_THREADPOOL_SIZE is set. */
export const DEFAULT_THREAD_POOL_SIZE = 16;

process.env.UV_THREADPOOL_SIZE ??= String(DEFAULT_THREAD_POOL_SIZE);
