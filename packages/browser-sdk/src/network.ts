import type { RequestEvent } from '@svc/protocol';

// The page's requests (`fetch` and `XMLHttpRequest`) as `request` events (PROTOCOL.md §1): method,
// URL without fragment and without query string (but the parameters `networkQueryParams` names),
// status, duration, sizes the browser tells, failure.
// Never bodies or headers. For URLs of `tracePropagationTargets` a W3C `traceparent` header is
// added and its trace id recorded, so the server joins the session to the backend's traces.
// Fields left `undefined` are absent on the wire (chunks are JSON).

/** The `init` options the network watcher reads. */
export interface NetworkOptions {
  /** The service's base URL: requests to its API (`/v1/…`) are the SDK's own, never recorded. */
  endpoint: string;
  /** A URL gets a `traceparent` when it contains one of the strings or matches one of the expressions. */
  tracePropagationTargets?: ReadonlyArray<string | RegExp> | undefined;
  /** Query parameters kept in recorded URLs (by name); every other one is left out. */
  networkQueryParams?: readonly string[] | undefined;
}

type Failure = RequestEvent['failure'];

/** 32 random lowercase hex digits (a v4 UUID's: 122 random bits). */
const hex = () => crypto.randomUUID().replace(/-/g, '');

/** The byte length of a request body when it is known without reading it (text: its UTF-8 length). */
const bodySize = (body: unknown): number | undefined =>
  typeof body === 'string'
    ? new Blob([body]).size
    : body instanceof Blob
      ? body.size
      : body instanceof ArrayBuffer || ArrayBuffer.isView(body)
        ? body.byteLength
        : undefined;

/** A `content-length` header as a size. */
const sizeOf = (header: string | null) =>
  header === null || header === '' ? undefined : Number(header) || 0;

/**
 * Wraps the page's `fetch` and `XMLHttpRequest` to record their requests; returns what undoes it.
 *
 * @example
 * ```ts
 * const undo = watchNetwork(window, push, { endpoint: 'https://replay.example.com', tracePropagationTargets: ['api.example.com'] });
 * ```
 */
export function watchNetwork(
  page: Window & typeof globalThis,
  push: (event: RequestEvent) => void,
  options: NetworkOptions,
): () => void {
  const ignorePrefix = `${options.endpoint.replace(/\/$/, '')}/v1/`;
  const targets = options.tracePropagationTargets ?? [];
  const allowed = options.networkQueryParams ?? [];
  /** The absolute URL (page-relative ones resolved), or undefined when it is none. */
  const absolute = (url: string) => {
    try {
      return new URL(url, page.location.href);
    } catch {
      return undefined;
    }
  };
  /**
   * Starts recording a request to `url`: undefined for the SDK's own, else the header to add
   * (a `traceparent`, or none) and the function that records its end.
   */
  const start = (initiator: RequestEvent['initiator'], method: string, url: string, body: unknown) => {
    const parsed = absolute(url);
    if (parsed === undefined || parsed.href.startsWith(ignorePrefix)) return undefined;
    const path = parsed.origin + parsed.pathname;
    const query = new URLSearchParams(
      [...parsed.searchParams].filter(([name]) => allowed.includes(name)),
    ).toString();
    const clean = (query === '' ? path : `${path}?${query}`).slice(0, 2048);
    const traceId = targets.some((target) =>
      typeof target === 'string' ? path.includes(target) : target.test(path),
    )
      ? hex()
      : undefined;
    const t = Date.now();
    return {
      traceparent: traceId && `00-${traceId}-${hex().slice(16)}-01`,
      end: (status: number | undefined, failure: Failure, responseBytes?: number) =>
        push({
          t,
          type: 'request',
          initiator,
          method: method.toUpperCase().slice(0, 16),
          url: clean,
          status,
          durationMs: Date.now() - t,
          requestBytes: bodySize(body),
          responseBytes,
          failure,
          traceId,
        }),
    };
  };

  const originalFetch = page.fetch;
  const wrappedFetch: typeof fetch = (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const started = start(
      'fetch',
      init?.method ?? request?.method ?? 'GET',
      request?.url ?? String(input),
      init?.body,
    );
    if (started?.traceparent) {
      const headers = new Headers(init?.headers ?? request?.headers);
      headers.set('traceparent', started.traceparent);
      init = { ...init, headers };
    }
    const response = originalFetch.call(page, input, init);
    return started === undefined
      ? response
      : response.then(
          (answer) => {
            started.end(answer.status, undefined, sizeOf(answer.headers.get('content-length')));
            return answer;
          },
          (error: unknown) => {
            const name = (error as Error | undefined)?.name;
            started.end(
              undefined,
              name === 'AbortError' ? 'abort' : name === 'TimeoutError' ? 'timeout' : 'network',
            );
            throw error;
          },
        );
  };
  page.fetch = wrappedFetch;

  const prototype = page.XMLHttpRequest.prototype;
  const { open, send } = prototype;
  const opened = new WeakMap<XMLHttpRequest, [method: string, url: string]>();
  prototype.open = function (this: XMLHttpRequest, ...args: unknown[]) {
    opened.set(this, [String(args[0]), String(args[1])]);
    return (open as (...all: unknown[]) => void).apply(this, args);
  } as typeof open;
  prototype.send = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null) {
    const [method, url] = opened.get(this) ?? ['', ''];
    const started = url === '' ? undefined : start('xhr', method, url, body);
    if (started !== undefined) {
      if (started.traceparent) this.setRequestHeader('traceparent', started.traceparent);
      let failure: Failure;
      for (const type of ['error', 'abort', 'timeout'] as const)
        this.addEventListener(type, () => {
          failure = type === 'error' ? 'network' : type;
        });
      this.addEventListener('loadend', () =>
        started.end(
          failure === undefined ? this.status : undefined,
          failure,
          sizeOf(this.getResponseHeader('content-length')),
        ),
      );
    }
    return send.call(this, body);
  };
  return () => {
    if (page.fetch === wrappedFetch) page.fetch = originalFetch;
    prototype.open = open;
    prototype.send = send;
  };
}
