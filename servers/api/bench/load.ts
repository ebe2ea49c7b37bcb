import autocannon from 'autocannon';

/** What one load run measured. */
export interface LoadResult {
  /** Requests answered (any status). */
  requests: number;
  /** Answers with a 2xx status. */
  ok: number;
  /** Answers with another status. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  seconds: number;
  /** 2xx answers per second. */
  perSecond: number;
  /** Latency percentiles of every answer, in milliseconds. */
  p50: number;
  p95: number;
  p99: number;
  /** The first non-2xx status and body seen, to explain failures. */
  firstFailure?: string;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A new body for every request (POST). */
  body?: () => Buffer;
  connections: number;
  /** Seconds. */
  duration: number;
}

/** The `fraction` percentile (nearest rank) of `sorted` ascending values. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] as number;
}

/**
 * Runs autocannon against `url` for `duration` seconds with `connections` keep-alive connections
 * (no pipelining) and records every answer's latency, so p95 is exact (autocannon's own summary
 * has p97.5 but no p95).
 */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let firstFailure: string | undefined;
  const nextBody = options.body;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: options.method ?? 'GET',
        headers: options.headers,
        connections: options.connections,
        pipelining: 1,
        duration: options.duration,
        timeout: 30,
        requests: [
          {
            setupRequest: (request) => (nextBody === undefined ? request : { ...request, body: nextBody() }),
            onResponse: (status, body) => {
              if (status >= 200 && status < 300) ok += 1;
              else firstFailure ??= `${status} ${body.slice(0, 300)}`;
            },
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => {
        if (error !== null && error !== undefined) {
          reject(error);
          return;
        }
        latencies.sort((left, right) => left - right);
        const seconds = result.duration;
        resolve({
          requests: latencies.length,
          ok,
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          seconds,
          perSecond: ok / seconds,
          p50: percentile(latencies, 0.5),
          p95: percentile(latencies, 0.95),
          p99: percentile(latencies, 0.99),
          ...(firstFailure === undefined ? {} : { firstFailure }),
        });
      },
    );
    instance.on('response', (_client, _statusCode, _bytes, responseTime) => {
      latencies.push(responseTime);
    });
  });
}

/** `812/s  p50 11.2 ms  p95 30.1 ms  p99 45.0 ms` */
export function describeLoad(result: LoadResult): string {
  const milliseconds = (value: number) => `${value.toFixed(1)} ms`;
  const failures = result.non2xx + result.errors;
  return `${Math.round(result.perSecond)}/s  p50 ${milliseconds(result.p50)}  p95 ${milliseconds(result.p95)}  p99 ${milliseconds(result.p99)}  (${result.ok} ok${failures > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ', 0 failed'})`;
}
