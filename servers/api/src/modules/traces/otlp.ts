import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

// OTLP/HTTP payloads (opentelemetry.io/docs/specs/otlp/#otlphttp): export requests decoded from
// protobuf (with the definitions of ./proto) or from OTLP JSON (hex ids, int64 as strings or
// numbers, enums as integers, lowerCamelCase fields), turned into the rows this module stores,
// and the export responses encoded in the request's format.

/** The two formats of OTLP/HTTP, by `Content-Type`. */
export type OtlpFormat = 'protobuf' | 'json';

/** The two signals this server takes. */
export type OtlpSignal = 'traces' | 'logs';

const PROTO_DIRECTORY = fileURLToPath(new URL('./proto/', import.meta.url));

interface OtlpTypes {
  tracesRequest: protobuf.Type;
  tracesResponse: protobuf.Type;
  logsRequest: protobuf.Type;
  logsResponse: protobuf.Type;
}

let types: OtlpTypes | undefined;

/** The message types, loaded from ./proto once, on first use. */
function otlpTypes(): OtlpTypes {
  if (types === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(PROTO_DIRECTORY, target);
    root.loadSync([
      'opentelemetry/proto/collector/trace/v1/trace_service.proto',
      'opentelemetry/proto/collector/logs/v1/logs_service.proto',
    ]);
    types = {
      tracesRequest: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
      tracesResponse: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
      logsRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
      logsResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    };
  }
  return types;
}

/** A span as stored (without project and day, which the repository adds). */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  service: string | null;
  startTime: Date;
  endTime: Date;
  /** End minus start, in milliseconds with the nanoseconds' precision kept as a fraction. */
  durationMs: number;
  /** Status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string | null;
  attributes: Record<string, unknown>;
  resourceAttributes: Record<string, unknown>;
  /** The `session.id` attribute of the span, else of its resource. */
  sessionId: string | null;
}

/** A log record as stored (without project and day). */
export interface DecodedLogRecord {
  /** `timeUnixNano`, else `observedTimeUnixNano`. */
  time: Date;
  traceId: string | null;
  spanId: string | null;
  severityNumber: number;
  severityText: string | null;
  /** The body: a string as it is, any other value as JSON. */
  body: string | null;
  attributes: Record<string, unknown>;
  service: string | null;
  sessionId: string | null;
}

/** What a request held: the valid items, and how many were rejected and why (the first reason). */
export type DecodeResult<Item> =
  | { success: true; items: Item[]; rejected: number; rejectionMessage: string | undefined }
  | { success: false; message: string };

type Loose = Record<string, unknown>;

const HEX_TRACE_ID = /^[0-9a-f]{32}$/;
const HEX_SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO = /^0+$/;
/** A value's nesting that attribute conversion follows (deeper values become null). */
const MAX_VALUE_DEPTH = 8;
/** The longest string value kept; longer ones are cut. */
const MAX_STRING_LENGTH = 8192;

function isObject(value: unknown): value is Loose {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/** An array field (absent: empty); undefined when it is something else. */
function arrayField(object: Loose, name: string): unknown[] | undefined {
  const value = object[name];
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : undefined;
}

/** An id as lowercase hex: bytes from protobuf, a hex string from JSON; '' when empty or absent. */
function idOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return '';
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (typeof value === 'string') return value.toLowerCase();
  return undefined;
}

/** An id as an error message shows it: hex, whatever its length. */
function shownId(value: unknown): string {
  return JSON.stringify((idOf(value) ?? String(value)).slice(0, 40));
}

/** An int64 (a string or a number in JSON, a string from protobuf) as a bigint; undefined if not one. */
function int64Of(value: unknown): bigint | undefined {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return BigInt(value);
  // A JSON number past 2^53 has lost precision already; it is taken as it came.
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return undefined;
}

function integerOf(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0;
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function stringOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value.slice(0, MAX_STRING_LENGTH) : undefined;
}

/** An AnyValue as plain JSON: ints as numbers when safe (else strings), bytes as base64. */
function anyValueOf(value: unknown, depth = 0): unknown {
  if (!isObject(value) || depth > MAX_VALUE_DEPTH) return null;
  if (typeof value.stringValue === 'string') return value.stringValue.slice(0, MAX_STRING_LENGTH);
  if (typeof value.boolValue === 'boolean') return value.boolValue;
  if (value.intValue !== undefined) {
    const integer = int64Of(value.intValue);
    if (integer === undefined) return null;
    return integer >= BigInt(Number.MIN_SAFE_INTEGER) && integer <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(integer)
      : integer.toString();
  }
  if (typeof value.doubleValue === 'number') return value.doubleValue;
  if (typeof value.doubleValue === 'string') return Number(value.doubleValue);
  if (isObject(value.arrayValue)) {
    const values = arrayField(value.arrayValue, 'values') ?? [];
    return values.map((item) => anyValueOf(item, depth + 1));
  }
  if (isObject(value.kvlistValue)) return attributesOf(value.kvlistValue.values, depth + 1);
  if (value.bytesValue instanceof Uint8Array) return Buffer.from(value.bytesValue).toString('base64');
  if (typeof value.bytesValue === 'string') return value.bytesValue;
  return null;
}

/** A KeyValue list as an object (later keys win); anything malformed is skipped. */
function attributesOf(list: unknown, depth = 0): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  if (!Array.isArray(list)) return attributes;
  for (const entry of list) {
    if (!isObject(entry) || typeof entry.key !== 'string' || entry.key === '') continue;
    attributes[entry.key.slice(0, 256)] = anyValueOf(entry.value, depth);
  }
  return attributes;
}

function sessionIdOf(...sources: Record<string, unknown>[]): string | null {
  for (const source of sources) {
    const value = source['session.id'];
    if (typeof value === 'string' && value !== '' && value.length <= 128) return value;
  }
  return null;
}

/** Milliseconds since the epoch of a count of nanoseconds, with the fraction kept. */
function millisecondsOf(nanoseconds: bigint): number {
  return Number(nanoseconds / 1_000_000n) + Number(nanoseconds % 1_000_000n) / 1_000_000;
}

/** Parses a body into a loose request object, or says why it is no OTLP request at all. */
function parseRequest(
  body: Buffer,
  format: OtlpFormat,
  type: protobuf.Type,
): { success: true; request: Loose } | { success: false; message: string } {
  if (body.length === 0) return { success: true, request: {} };
  if (format === 'protobuf') {
    try {
      const message = type.decode(body);
      const request = type.toObject(message, { longs: String, enums: Number, defaults: false });
      return { success: true, request };
    } catch (error) {
      return {
        success: false,
        message: `The body is not an OTLP protobuf message: ${(error as Error).message}`,
      };
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    return { success: false, message: `The body is not JSON: ${(error as Error).message}` };
  }
  if (!isObject(parsed)) return { success: false, message: 'The body must be a JSON object' };
  return { success: true, request: parsed };
}

/** Walks resource → scope → item lists, failing when a level's list is no list. */
function itemsOf(
  request: Loose,
  names: { resources: string; scopes: string; items: string },
):
  | { success: true; groups: { resource: Record<string, unknown>; items: unknown[] }[] }
  | { success: false; message: string } {
  const resources = arrayField(request, names.resources);
  if (resources === undefined) return { success: false, message: `${names.resources} must be an array` };
  const groups: { resource: Record<string, unknown>; items: unknown[] }[] = [];
  for (const [index, resourceEntry] of resources.entries()) {
    if (!isObject(resourceEntry))
      return { success: false, message: `${names.resources}[${index}] must be an object` };
    const resource = isObject(resourceEntry.resource) ? attributesOf(resourceEntry.resource.attributes) : {};
    const scopes = arrayField(resourceEntry, names.scopes);
    if (scopes === undefined)
      return { success: false, message: `${names.resources}[${index}].${names.scopes} must be an array` };
    for (const [scopeIndex, scope] of scopes.entries()) {
      const items = isObject(scope) ? arrayField(scope, names.items) : undefined;
      if (items === undefined)
        return {
          success: false,
          message: `${names.resources}[${index}].${names.scopes}[${scopeIndex}].${names.items} must be an array`,
        };
      groups.push({ resource, items });
    }
  }
  return { success: true, groups };
}

function serviceOf(resource: Record<string, unknown>): string | null {
  const name = resource['service.name'];
  return typeof name === 'string' && name !== '' ? name : null;
}

/** One span, or why it is rejected. */
function decodeSpan(span: unknown, resource: Record<string, unknown>): DecodedSpan | string {
  if (!isObject(span)) return 'a span is not an object';
  const traceId = idOf(span.traceId);
  const spanId = idOf(span.spanId);
  const parentSpanId = idOf(span.parentSpanId);
  if (traceId === undefined || !HEX_TRACE_ID.test(traceId) || ZERO.test(traceId))
    return `invalid traceId ${shownId(span.traceId)}: 16 bytes, not all zero (32 hex digits in JSON)`;
  if (spanId === undefined || !HEX_SPAN_ID.test(spanId) || ZERO.test(spanId))
    return `invalid spanId ${shownId(span.spanId)}: 8 bytes, not all zero (16 hex digits in JSON)`;
  if (parentSpanId === undefined || (parentSpanId !== '' && !HEX_SPAN_ID.test(parentSpanId)))
    return `invalid parentSpanId ${shownId(span.parentSpanId)}`;
  const start = int64Of(span.startTimeUnixNano);
  const end = int64Of(span.endTimeUnixNano);
  if (start === undefined || end === undefined || start <= 0n || end < start)
    return `span ${spanId}: startTimeUnixNano and endTimeUnixNano must be times, the end not before the start`;
  const name = stringOf(span.name);
  const kind = integerOf(span.kind);
  const status = isObject(span.status) ? span.status : {};
  const statusCode = integerOf(status.code);
  const statusMessage = stringOf(status.message);
  if (name === undefined || kind === undefined || statusCode === undefined || statusMessage === undefined)
    return `span ${spanId}: name, kind or status has the wrong type`;
  const attributes = attributesOf(span.attributes);
  const startMs = millisecondsOf(start);
  return {
    traceId,
    spanId,
    parentSpanId: parentSpanId === '' || ZERO.test(parentSpanId) ? null : parentSpanId,
    name,
    kind,
    service: serviceOf(resource),
    startTime: new Date(Math.floor(startMs)),
    endTime: new Date(Math.floor(millisecondsOf(end))),
    durationMs: millisecondsOf(end - start),
    statusCode,
    statusMessage: statusMessage === '' ? null : statusMessage,
    attributes,
    resourceAttributes: resource,
    sessionId: sessionIdOf(attributes, resource),
  };
}

/** One log record, or why it is rejected. */
function decodeLogRecord(record: unknown, resource: Record<string, unknown>): DecodedLogRecord | string {
  if (!isObject(record)) return 'a log record is not an object';
  const traceId = idOf(record.traceId);
  const spanId = idOf(record.spanId);
  if (traceId === undefined || (traceId !== '' && !HEX_TRACE_ID.test(traceId)))
    return `invalid traceId ${shownId(record.traceId)}`;
  if (spanId === undefined || (spanId !== '' && !HEX_SPAN_ID.test(spanId)))
    return `invalid spanId ${shownId(record.spanId)}`;
  const time = int64Of(record.timeUnixNano);
  const observed = int64Of(record.observedTimeUnixNano);
  if (time === undefined || observed === undefined) return 'timeUnixNano must be an int64';
  const nanoseconds = time > 0n ? time : observed;
  if (nanoseconds <= 0n) return 'a log record needs timeUnixNano or observedTimeUnixNano';
  const severityNumber = integerOf(record.severityNumber);
  const severityText = stringOf(record.severityText);
  if (severityNumber === undefined || severityText === undefined) return 'severity has the wrong type';
  const body = record.body === undefined || record.body === null ? null : anyValueOf(record.body);
  const attributes = attributesOf(record.attributes);
  return {
    time: new Date(Math.floor(millisecondsOf(nanoseconds))),
    traceId: traceId === '' || ZERO.test(traceId) ? null : traceId,
    spanId: spanId === '' || ZERO.test(spanId) ? null : spanId,
    severityNumber,
    severityText: severityText === '' ? null : severityText,
    body:
      body === null
        ? null
        : typeof body === 'string'
          ? body
          : JSON.stringify(body).slice(0, MAX_STRING_LENGTH),
    attributes,
    service: serviceOf(resource),
    sessionId: sessionIdOf(attributes, resource),
  };
}

function decodeItems<Item>(
  request: Loose,
  names: { resources: string; scopes: string; items: string },
  decodeItem: (item: unknown, resource: Record<string, unknown>) => Item | string,
): DecodeResult<Item> {
  const walked = itemsOf(request, names);
  if (!walked.success) return walked;
  const items: Item[] = [];
  let rejected = 0;
  let rejectionMessage: string | undefined;
  for (const group of walked.groups) {
    for (const item of group.items) {
      const decoded = decodeItem(item, group.resource);
      if (typeof decoded === 'string') {
        rejected += 1;
        rejectionMessage ??= decoded;
      } else items.push(decoded);
    }
  }
  return { success: true, items, rejected, rejectionMessage };
}

/**
 * The spans of an `ExportTraceServiceRequest`; invalid spans (bad ids or times) are counted as
 * rejected, a body that is no request at all fails.
 *
 * @example
 * ```ts
 * const result = decodeTraces(body, 'json');
 * if (result.success) console.log(result.items.length, result.rejected);
 * ```
 */
export function decodeTraces(body: Buffer, format: OtlpFormat): DecodeResult<DecodedSpan> {
  const parsed = parseRequest(body, format, otlpTypes().tracesRequest);
  if (!parsed.success) return parsed;
  return decodeItems(
    parsed.request,
    { resources: 'resourceSpans', scopes: 'scopeSpans', items: 'spans' },
    decodeSpan,
  );
}

/**
 * The log records of an `ExportLogsServiceRequest`, as {@link decodeTraces} for spans.
 *
 * @example
 * ```ts
 * const result = decodeLogs(body, 'protobuf');
 * ```
 */
export function decodeLogs(body: Buffer, format: OtlpFormat): DecodeResult<DecodedLogRecord> {
  const parsed = parseRequest(body, format, otlpTypes().logsRequest);
  if (!parsed.success) return parsed;
  return decodeItems(
    parsed.request,
    { resources: 'resourceLogs', scopes: 'scopeLogs', items: 'logRecords' },
    decodeLogRecord,
  );
}

/**
 * The export response: empty when everything was accepted, else `partialSuccess` with the
 * rejected count and a message; protobuf bytes or a JSON text, as the request came.
 *
 * @example
 * ```ts
 * encodeExportResponse('traces', 'json', 1, 'invalid traceId'); // '{"partialSuccess":{"rejectedSpans":"1",...}}'
 * ```
 */
export function encodeExportResponse(
  signal: OtlpSignal,
  format: OtlpFormat,
  rejected: number,
  message: string | undefined,
): Buffer | string {
  const countField = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  const response =
    rejected === 0 ? {} : { partialSuccess: { [countField]: String(rejected), errorMessage: message ?? '' } };
  if (format === 'json') return JSON.stringify(response);
  const type = signal === 'traces' ? otlpTypes().tracesResponse : otlpTypes().logsResponse;
  return Buffer.from(type.encode(type.fromObject(response)).finish());
}
