import { z } from 'zod';
import { errorBodySchema } from './api.ts';
import * as callEvents from './call-event.ts';
import {
  callSampleSchema,
  connectionInfoSchema,
  detectorKindSchema,
  trackSampleSchema,
} from './call-sample.ts';
import { chunkSchema } from './chunk.ts';
import {
  customEventSchema,
  errorEventSchema,
  gapEventSchema,
  governorEventSchema,
  identifyEventSchema,
  navEventSchema,
  rrwebEventSchema,
  triggerEventSchema,
  vitalEventSchema,
} from './events.ts';
import { getJsonSchemaKeywords } from './json-schema-keywords.ts';
import { timestampSchema } from './scalars.ts';
import { sessionEventSchema, unknownCallEventSchema, unknownEventSchema } from './session-event.ts';
import { sessionMetaSchema, userSchema } from './session-meta.ts';
import { releaseRegressionSchema, vitalsRegressionSchema, webhookEventSchema } from './webhook.ts';

/**
 * The `$id` of the published JSON Schema document.
 *
 * @example
 * ```ts
 * ajv.getSchema(`${PROTOCOL_JSON_SCHEMA_ID}#/$defs/CallSample`);
 * ```
 */
export const PROTOCOL_JSON_SCHEMA_ID = 'https://schemas.svc.dev/protocol/v1.json';

/** Wire formats with a named `$defs` entry, in document order. */
function namedSchemas(): Array<[string, z.ZodType, string]> {
  return [
    ['Chunk', chunkSchema, 'The body of POST /v1/ingest (PROTOCOL.md §1). The document root.'],
    ['SessionMeta', sessionMetaSchema, 'Session metadata; required on the chunk with seq = 0.'],
    ['User', userSchema, 'An end user.'],
    ['Timestamp', timestampSchema, 'Integer milliseconds since the Unix epoch, 2000-01-01..2100-01-01.'],
    ['SessionEvent', sessionEventSchema, 'An event of a known type.'],
    [
      'UnknownEvent',
      unknownEventSchema,
      'An event of a type this version does not know: tolerated, skipped.',
    ],
    [
      'UnknownCallEvent',
      unknownCallEventSchema,
      'A call.event with a name this version does not know: tolerated, skipped.',
    ],
    ['RrwebEvent', rrwebEventSchema, 'type "rrweb": one rrweb event, opaque except for its type.'],
    ['NavEvent', navEventSchema, 'type "nav".'],
    ['ErrorEvent', errorEventSchema, 'type "error".'],
    ['CustomEvent', customEventSchema, 'type "custom": the SDK track() call.'],
    ['VitalEvent', vitalEventSchema, 'type "vital".'],
    ['IdentifyEvent', identifyEventSchema, 'type "identify".'],
    ['TriggerEvent', triggerEventSchema, 'type "trigger".'],
    ['GapEvent', gapEventSchema, 'type "gap".'],
    ['GovernorEvent', governorEventSchema, 'type "governor".'],
    ['CallSample', callSampleSchema, 'type "call.sample" (PROTOCOL.md §2).'],
    ['ConnectionInfo', connectionInfoSchema, 'The conn of a call sample.'],
    ['TrackSample', trackSampleSchema, 'One track entry of a call sample.'],
    ['DetectorKind', detectorKindSchema, 'The 13 detector kinds (PROTOCOL.md §5).'],
    ['CallEvent', callEvents.callEventSchema, 'type "call.event", discriminated on name (PROTOCOL.md §3).'],
    ['PeerConnectionCreatedEvent', callEvents.peerConnectionCreatedEventSchema, 'call.event "pc_created".'],
    ['ConnectionStateEvent', callEvents.connectionStateEventSchema, 'call.event "connection_state".'],
    ['IceStateEvent', callEvents.iceStateEventSchema, 'call.event "ice_state".'],
    ['IceGatheringEvent', callEvents.iceGatheringEventSchema, 'call.event "ice_gathering".'],
    ['SignalingStateEvent', callEvents.signalingStateEventSchema, 'call.event "signaling_state".'],
    ['IceCandidateErrorEvent', callEvents.iceCandidateErrorEventSchema, 'call.event "ice_candidate_error".'],
    [
      'CandidatePairChangeEvent',
      callEvents.candidatePairChangeEventSchema,
      'call.event "candidate_pair_change".',
    ],
    ['TrackAddedEvent', callEvents.trackAddedEventSchema, 'call.event "track_added".'],
    ['TrackMutedEvent', callEvents.trackMutedEventSchema, 'call.event "track_muted".'],
    ['TrackUnmutedEvent', callEvents.trackUnmutedEventSchema, 'call.event "track_unmuted".'],
    ['TrackEndedEvent', callEvents.trackEndedEventSchema, 'call.event "track_ended".'],
    ['CodecChangeEvent', callEvents.codecChangeEventSchema, 'call.event "codec_change".'],
    ['ResolutionChangeEvent', callEvents.resolutionChangeEventSchema, 'call.event "resolution_change".'],
    ['IceRestartEvent', callEvents.iceRestartEventSchema, 'call.event "ice_restart".'],
    ['MediaAcquiredEvent', callEvents.mediaAcquiredEventSchema, 'call.event "media_acquired".'],
    ['MediaErrorEvent', callEvents.mediaErrorEventSchema, 'call.event "media_error".'],
    ['MediaErrorClass', callEvents.mediaErrorClassSchema, 'The media_error classes (PROTOCOL.md §3).'],
    ['DeviceInventoryEvent', callEvents.deviceInventoryEventSchema, 'call.event "device_inventory".'],
    [
      'DeviceLabels',
      callEvents.deviceLabelsSchema,
      'The device labels of device_inventory and device_change.',
    ],
    ['DeviceChangeEvent', callEvents.deviceChangeEventSchema, 'call.event "device_change".'],
    ['DataChannelEvent', callEvents.dataChannelEventSchema, 'call.event "data_channel".'],
    ['PeerConnectionClosedEvent', callEvents.peerConnectionClosedEventSchema, 'call.event "pc_closed".'],
    ['WebhookEvent', webhookEventSchema, 'A webhook delivery body (PROTOCOL.md §6).'],
    ['ReleaseRegression', releaseRegressionSchema, 'The data.regression of a release.regression event.'],
    ['VitalsRegression', vitalsRegressionSchema, 'The data.regression of a vitals.regression event.'],
    ['ErrorBody', errorBodySchema, 'The body of every REST error response.'],
  ];
}

/**
 * Builds the JSON Schema (draft 2020-12) of every protocol v1 wire format from the zod schemas:
 * one document whose `$defs` name each format (`Chunk`, `SessionMeta`, `CallSample`,
 * `TrackSample`, `CallEvent`, `WebhookEvent`, `ErrorBody`, ...) and whose root is a `Chunk`.
 * It describes the input side (what may be sent), and adds as plain keywords the rules zod
 * checks in code (`meta` required when `seq = 0`, unknown event types exclude the known ones,
 * property counts). `schema/protocol-v1.json` in the package is this document.
 *
 * @example
 * ```ts
 * import Ajv2020 from 'ajv/dist/2020';
 * import { createProtocolJsonSchema } from '@svc/protocol';
 *
 * const ajv = new Ajv2020();
 * ajv.addSchema(createProtocolJsonSchema());
 * const validateSample = ajv.getSchema('https://schemas.svc.dev/protocol/v1.json#/$defs/CallSample');
 * ```
 */
export function createProtocolJsonSchema(): Record<string, unknown> {
  const registry = z.registry<{ id: string; description: string }>();
  for (const [id, schema, description] of namedSchemas()) registry.add(schema, { id, description });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    metadata: registry,
    unrepresentable: 'throw',
    uri: (id) => `#/$defs/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      const keywords = getJsonSchemaKeywords(zodSchema as unknown as z.ZodType);
      if (keywords !== undefined) Object.assign(jsonSchema, keywords);
    },
  });
  const definitions: Record<string, unknown> = {};
  for (const [id] of namedSchemas()) {
    const { $schema: _schema, $id: _id, ...definition } = schemas[id] ?? {};
    definitions[id] = definition;
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: PROTOCOL_JSON_SCHEMA_ID,
    title: 'Session replay and call quality wire contract, protocol v1',
    description:
      'Generated from the zod schemas of @svc/protocol by scripts/build-json-schema.ts; do not edit. The root validates an ingest chunk; every wire format is under $defs.',
    $ref: '#/$defs/Chunk',
    $defs: definitions,
  };
}
