import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Dashboard } from './harness.ts';
import { ingestSynthetic, type Json } from './recorded-page.ts';

// Sessions for the AI pages, made from the protocol's recorded session (a call page whose code
// throws `TypeError: … (reading 'srcObject')` and an unhandled `Error: Reconnect failed`): six
// sessions a minute apart, each on its own URL. Three of them, in release web@2.0.0, also have a
// failed `POST /api/calls/42/join` (HTTP 503) 200 ms before the errors; the other three, in
// web@1.9.0, have no error at all. So the TypeError issue concentrates in web@2.0.0 (all of its
// occurrences, 40% of the sessions of its days), and its likely cause is the failed request.

const require = createRequire(import.meta.url);

/** The failed request's `t` in the fixture's clock: 200 ms before the TypeError. */
const REQUEST_T = 1_763_700_004_000;
const ERROR_TYPES = new Set(['error']);

export interface AnalysisSessions {
  /** The newest session with the errors: the issues' latest occurrence. */
  sessionId: string;
  /** Its URL: the title of its search result. */
  url: string;
  /** Every session with the errors, oldest first. */
  erroring: string[];
}

/** Ingests the six sessions and processes them (issues, search signals). */
export async function ingestAnalysisSessions(dashboard: Dashboard): Promise<AnalysisSessions> {
  const fixture = JSON.parse(
    await readFile(require.resolve('@svc/protocol/fixtures/valid/Chunk/recording-seq-0.json'), 'utf8'),
  ) as Json;
  const erroring: string[] = [];
  let url = '';
  for (let index = 0; index < 6; index++) {
    const withErrors = [0, 2, 5].includes(index);
    const shift = index * 60_000;
    const pageUrl = `https://app.example.com/calls/4${index}`;
    const events = [
      ...fixture.events.filter((event: Json) => withErrors || !ERROR_TYPES.has(event.type)),
      ...(withErrors
        ? [
            {
              t: REQUEST_T,
              type: 'request',
              initiator: 'fetch',
              method: 'POST',
              url: 'https://app.example.com/api/calls/42/join',
              status: 503,
              durationMs: 120,
            },
          ]
        : []),
    ]
      .map((event: Json) => ({
        ...event,
        t: event.t + shift,
        ...(event.type === 'nav' ? { url: pageUrl } : {}),
        ...(event.type === 'rrweb' && typeof event.data.timestamp === 'number'
          ? { data: { ...event.data, timestamp: event.data.timestamp + shift } }
          : {}),
        ...(event.type === 'gap' ? { fromT: event.fromT + shift, toT: event.toT + shift } : {}),
      }))
      .sort((left: Json, right: Json) => left.t - right.t);
    const template = {
      ...fixture,
      meta: { ...fixture.meta, url: pageUrl, release: withErrors ? 'web@2.0.0' : 'web@1.9.0' },
    };
    const sessionId = await ingestSynthetic(dashboard, template, events);
    if (withErrors) {
      erroring.push(sessionId);
      url = pageUrl;
    }
  }
  await dashboard.test.processingWorker.runUntilIdle();
  return { sessionId: erroring.at(-1) as string, url, erroring };
}

/** `GET`s an API path with the first project's token. */
export async function apiJson<T = Json>(dashboard: Dashboard, path: string, method = 'GET'): Promise<T> {
  const answer = await dashboard.test.app.inject({
    method: method as 'GET',
    url: path,
    headers: dashboard.test.first.headers,
  });
  if (answer.statusCode !== 200) throw new Error(`${method} ${path}: ${answer.statusCode} ${answer.body}`);
  return answer.json() as T;
}
