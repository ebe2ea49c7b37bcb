import { z } from 'zod';

// What an answer says of the model: whether one added prose to the deterministic result, and if
// not, why (servers/api/README.md, AI). Every AI endpoint answers its deterministic result either way.

export const modelNoteSchema = z.discriminatedUnion('used', [
  z.object({
    used: z.literal(false),
    /** Why no model took part: none is configured, the organization has AI off, … */
    reason: z.string(),
  }),
  z.object({
    used: z.literal(true),
    model: z.string(),
    /** The model's prose, grounded on the transcript and the deterministic result. */
    text: z.string(),
    /** The evidence ids the prose quotes (each one of the transcript's). */
    evidenceIds: z.array(z.string()),
  }),
]);
export type ModelNote = z.infer<typeof modelNoteSchema>;

/** The reason given while no model is configured on the server. */
export const NO_MODEL_REASON =
  'No model is configured: this is the deterministic result. An operator enables a model with SVC_AI_BASE_URL and SVC_AI_MODEL.';

/**
 * The note of an answer no model took part in.
 *
 * @example
 * ```ts
 * noModel(); // { used: false, reason: 'No model is configured: …' }
 * ```
 */
export function noModel(reason: string = NO_MODEL_REASON): ModelNote {
  return { used: false, reason };
}
