import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type DestinationPolicy, policyLookup } from './destination-policy.ts';

/** What a policy fetch is asked (openid-client's `customFetch` options, a subset of fetch's). */
export interface PolicyFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | Uint8Array | ArrayBuffer | ReadableStream | null;
  signal?: AbortSignal;
}

/** The code of the error a policy fetch fails with when the destination is refused. */
export const DESTINATION_REFUSED = 'ERR_DESTINATION_REFUSED';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch that connects only where the destination policy allows, judged on the address it
 * actually connects to: an IP-literal host before connecting, a name in the connection's own
 * `lookup` (every address it resolved to). A name that resolved to an allowed address when an
 * earlier check looked it up, then to a private one (DNS rebinding), is refused here. No redirect
 * is followed and the response body is cut at `maxBytes` (the request fails beyond it).
 *
 * For openid-client's `customFetch`: the SSO issuers an organization's admin names are fetched
 * from the server's own network (discovery, keys, token endpoint).
 *
 * @example
 * ```ts
 * const fetchSafely = createPolicyFetch(createDestinationPolicy(allowed));
 * await client.discovery(issuer, clientId, secret, undefined, { [client.customFetch]: fetchSafely });
 * ```
 */
export function createPolicyFetch(
  policy: DestinationPolicy,
  options: { maxBytes?: number } = {},
): (url: string, init?: PolicyFetchInit) => Promise<Response> {
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return (target, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(target);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        reject(new Error(`Only http and https are fetched, not ${url.protocol}`));
        return;
      }
      const hostname = url.hostname.replace(/^\[|\]$/g, '');
      const family = net.isIP(hostname);
      if (family !== 0) {
        const reason = policy.refusal(hostname, hostname, family === 6 ? 6 : 4);
        if (reason !== undefined) {
          reject(
            Object.assign(new Error(`${url.host} is not allowed: ${reason}`), { code: DESTINATION_REFUSED }),
          );
          return;
        }
      }
      let body: Buffer | undefined;
      if (init.body instanceof ReadableStream) {
        reject(new Error('A streamed request body is not supported'));
        return;
      }
      if (typeof init.body === 'string' || init.body instanceof URLSearchParams)
        body = Buffer.from(String(init.body));
      else if (init.body instanceof ArrayBuffer) body = Buffer.from(init.body);
      else if (init.body instanceof Uint8Array)
        body = Buffer.from(init.body.buffer, init.body.byteOffset, init.body.byteLength);
      let refusal: string | undefined;
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: init.method ?? 'GET',
        headers: {
          ...init.headers,
          ...(body === undefined ? {} : { 'content-length': String(body.length) }),
        },
        agent: false,
        lookup: policyLookup(policy, DESTINATION_REFUSED, (reason) => {
          refusal = reason;
        }),
        ...(init.signal === undefined ? {} : { signal: init.signal }),
      });
      request.on('error', (error) => {
        reject(
          refusal === undefined
            ? error
            : Object.assign(new Error(`${url.host} is not allowed: ${refusal}`), {
                code: DESTINATION_REFUSED,
              }),
        );
      });
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let received = 0;
        let tooLarge = false;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (tooLarge) return;
          if (received > maxBytes) {
            tooLarge = true;
            reject(new Error(`The response from ${url.host} is larger than ${maxBytes} bytes`));
            request.destroy();
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => {
          if (tooLarge) return;
          const headers = new Headers();
          for (let index = 0; index + 1 < response.rawHeaders.length; index += 2)
            headers.append(response.rawHeaders[index] as string, response.rawHeaders[index + 1] as string);
          const status = response.statusCode ?? 502;
          resolve(
            new Response(NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks), {
              status,
              statusText: response.statusMessage ?? '',
              headers,
            }),
          );
        });
      });
      request.end(body);
    });
}
