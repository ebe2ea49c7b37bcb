import { isId } from '@svc/protocol';
import { invalid } from './errors.ts';

/** The keyset position of a newest-first list of sessions or calls. */
interface StartedAtPosition {
  startedAt: Date;
  id: string;
}

/** A position in a session's events (or signals). */
interface EventPosition {
  seq: number;
  index: number;
}

// Cursors are opaque to clients: base64url of a small JSON array holding the keyset position.
// They are validated on the way in, so a tampered cursor is a 400, never a query error.

const MAX_CURSOR_LENGTH = 256;

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decode(cursor: string): unknown {
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

const badCursor = () => invalid('Invalid cursor: pass back the nextCursor of a previous page unchanged');

/** `[startedAt ms, id]` of the last item of a newest-first page, for ids of `prefix`. */
function encodeStartedAtCursor(position: StartedAtPosition): string {
  return encode([position.startedAt.getTime(), position.id]);
}

/** Throws a 400 `invalid` for anything {@link encodeStartedAtCursor} did not produce with `prefix`. */
function decodeStartedAtCursor(cursor: string, prefix: 'ses' | 'call'): StartedAtPosition {
  const value = decode(cursor);
  if (!Array.isArray(value) || value.length !== 2) throw badCursor();
  const [time, id] = value as [unknown, unknown];
  if (!Number.isSafeInteger(time) || (time as number) < 0 || !isId(prefix, id)) throw badCursor();
  return { startedAt: new Date(time as number), id };
}

/** `[startedAt ms, sessionId]`: the last session of the page. */
export const encodeSessionCursor: (position: StartedAtPosition) => string = encodeStartedAtCursor;

/** Throws a 400 `invalid` for anything {@link encodeSessionCursor} did not produce. */
export function decodeSessionCursor(cursor: string): StartedAtPosition {
  return decodeStartedAtCursor(cursor, 'ses');
}

/** `[startedAt ms, callId]`: the last call of the page. */
export const encodeCallCursor: (position: StartedAtPosition) => string = encodeStartedAtCursor;

/** Throws a 400 `invalid` for anything {@link encodeCallCursor} did not produce. */
export function decodeCallCursor(cursor: string): StartedAtPosition {
  return decodeStartedAtCursor(cursor, 'call');
}

/** `[seq, index]`: a position in a session's events (or signals). */
export function encodeEventCursor(position: EventPosition): string {
  return encode([position.seq, position.index]);
}

/** Throws a 400 `invalid` for anything {@link encodeEventCursor} did not produce. */
export function decodeEventCursor(cursor: string): EventPosition {
  const value = decode(cursor);
  if (!Array.isArray(value) || value.length !== 2) throw badCursor();
  const [seq, index] = value as [unknown, unknown];
  const isCount = (number: unknown) =>
    Number.isSafeInteger(number) && (number as number) >= 0 && (number as number) <= 2_147_483_647;
  if (!isCount(seq) || !isCount(index)) throw badCursor();
  return { seq: seq as number, index: index as number };
}

/** `[id]`: the last item of a page ordered by id, newest first (ids are ULIDs). */
export function encodeIdCursor(id: string): string {
  return encode([id]);
}

/** Throws a 400 `invalid` for anything {@link encodeIdCursor} did not produce with ids of `prefix`. */
export function decodeIdCursor(cursor: string, prefix: 'dlv' | 'evt'): string {
  const value = decode(cursor);
  if (!Array.isArray(value) || value.length !== 1 || !isId(prefix, value[0])) throw badCursor();
  return value[0] as string;
}

/** A server-side record id (`aud_`, `inv_`, ... of platform/ids.ts): prefix, `_`, a ULID. */
const SERVER_ID = /^[a-z]{2,5}_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * {@link decodeIdCursor} for ids of records the protocol does not name (audit entries, say):
 * a 400 `invalid` for anything `encodeIdCursor` did not produce with an id of `prefix`.
 */
export function decodeRecordCursor(cursor: string, prefix: string): string {
  const value = decode(cursor);
  if (!Array.isArray(value) || value.length !== 1) throw badCursor();
  const id = value[0];
  if (typeof id !== 'string' || !SERVER_ID.test(id) || !id.startsWith(`${prefix}_`)) throw badCursor();
  return id;
}

/** `[lastSeenAt ms, clusterId]`: the last cluster of a page, most recently seen first. */
export function encodeClusterCursor(position: { lastSeenAt: Date; id: string }): string {
  return encode([position.lastSeenAt.getTime(), position.id]);
}

/** Throws a 400 `invalid` for anything {@link encodeClusterCursor} did not produce. */
export function decodeClusterCursor(cursor: string): { lastSeenAt: Date; id: string } {
  const value = decode(cursor);
  if (!Array.isArray(value) || value.length !== 2) throw badCursor();
  const [time, id] = value as [unknown, unknown];
  if (!Number.isSafeInteger(time) || (time as number) < 0 || !isId('cl', id)) throw badCursor();
  return { lastSeenAt: new Date(time as number), id };
}

/** Rows a page by offset may skip at most. */
const MAX_OFFSET = 1_000_000;

/**
 * `[offset]`: for lists ordered by an aggregate, which has no stable key to page after (a
 * cluster's sessions, by when each last saw it).
 */
export function encodeOffsetCursor(offset: number): string {
  return encode([offset]);
}

/** Throws a 400 `invalid` for anything {@link encodeOffsetCursor} did not produce. */
export function decodeOffsetCursor(cursor: string): number {
  const value = decode(cursor);
  if (!Array.isArray(value) || value.length !== 1) throw badCursor();
  const [offset] = value as [unknown];
  if (!Number.isSafeInteger(offset) || (offset as number) < 0 || (offset as number) > MAX_OFFSET)
    throw badCursor();
  return offset as number;
}
