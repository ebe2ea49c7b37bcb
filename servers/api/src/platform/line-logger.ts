import type { FastifyBaseLogger } from 'fastify';

/**
 * A logger for library code run outside the server (the CLI, benches): warnings and errors go to
 * `write` as one line each (level, message and the error's message), the rest is dropped.
 *
 * @example
 * ```ts
 * const worker = createProcessingWorker({ database, blobStore, masterKey, log: createLineLogger((line) => process.stderr.write(`${line}\n`)) });
 * ```
 */
export function createLineLogger(write: (line: string) => void): FastifyBaseLogger {
  const writeAt =
    (level: string) =>
    (object: unknown, message?: string): void => {
      const error = (object as { err?: unknown } | null)?.err;
      const text = typeof object === 'string' ? object : (message ?? '');
      write(`${level}: ${text}${error instanceof Error ? `: ${error.message}` : ''}`);
    };
  const ignore = () => {};
  const logger = {
    level: 'warn',
    fatal: writeAt('fatal'),
    error: writeAt('error'),
    warn: writeAt('warn'),
    info: ignore,
    debug: ignore,
    trace: ignore,
    silent: ignore,
    child: () => logger,
  };
  // Only the methods above are called on it; pino's other members are never reached.
  return logger as unknown as FastifyBaseLogger;
}
