// The optional model (servers/api/README.md, The model): an OpenAI-compatible endpoint the
// operator configures, used for an organization only when its AI settings turn it on for the
// feature, within its monthly token cap. Every use is counted per organization, month, project and
// feature. Calls go through the Vercel `ai` package with its OpenAI-compatible provider.

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel, LanguageModelUsage } from 'ai';
import { type Kysely, sql } from 'kysely';
import type { Configuration } from '../../platform/config.ts';
import type { Database } from '../../platform/database/schema.ts';
import type { AiFeature } from '../../platform/database/tables/ai-settings.table.ts';
import { aiTokenCapReached, meter, monthOf } from '../usage/index.ts';
import { NO_MODEL_REASON } from './model-note.ts';

/** The features that may use the model, in the order settings list them. */
export const AI_FEATURES: readonly AiFeature[] = ['summary', 'explain', 'search', 'chat', 'draft_pr'];

/** An organization's AI settings as the API shows them (no row: AI off, every feature, no cap). */
export interface AiSettingsView {
  enabled: boolean;
  monthlyTokenCap: number | null;
  features: AiFeature[];
}

/** Whether the model may answer a request, and if so with what. */
export type ModelAccess =
  | {
      allowed: true;
      model: LanguageModel;
      name: string;
      organizationId: string;
      projectId: string;
      feature: AiFeature;
    }
  | {
      allowed: false;
      reason: string;
      /** The organization used its monthly cap: endpoints without a deterministic answer refuse with 429. */
      capped: boolean;
    };

export { monthOf };

/** The organization's AI settings (defaults when it never saved any). */
export async function readAiSettings(
  database: Kysely<Database>,
  organizationId: string,
): Promise<AiSettingsView> {
  const row = await database
    .selectFrom('ai_settings')
    .select(['enabled', 'monthly_token_cap', 'features'])
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  if (row === undefined) return { enabled: false, monthlyTokenCap: null, features: [...AI_FEATURES] };
  return {
    enabled: row.enabled,
    monthlyTokenCap: row.monthly_token_cap === null ? null : Number(row.monthly_token_cap),
    features: AI_FEATURES.filter((feature) => row.features.includes(feature)),
  };
}

/** Tokens (input and output) the organization used in the month of `at`. */
export async function tokensUsed(
  database: Kysely<Database>,
  organizationId: string,
  at: Date,
): Promise<number> {
  const row = await database
    .selectFrom('ai_usage')
    .select(sql<number>`coalesce(sum(input_tokens + output_tokens), 0)::bigint`.as('tokens'))
    .where('organization_id', '=', organizationId)
    .where('month', '=', sql<Date>`${monthOf(at)}::date`)
    .executeTakeFirst();
  return Number(row?.tokens ?? 0);
}

/** Models by configuration: one provider per process. */
const models = new WeakMap<NonNullable<Configuration['ai']>, LanguageModel>();

function modelOf(ai: NonNullable<Configuration['ai']>): LanguageModel {
  let model = models.get(ai);
  if (model === undefined) {
    const provider = createOpenAICompatible({
      name: 'svc-ai',
      baseURL: ai.baseUrl,
      ...(ai.apiKey === undefined ? {} : { apiKey: ai.apiKey }),
      includeUsage: true,
    });
    model = provider.chatModel(ai.model);
    models.set(ai, model);
  }
  return model;
}

/**
 * Whether the model may answer for `feature` in the project's organization now: a model is
 * configured, the organization turned AI on for the feature, and it has tokens left this month.
 *
 * @example
 * ```ts
 * const access = await modelAccess(fastify.database, fastify.configuration, { organizationId, projectId, feature: 'summary' });
 * if (!access.allowed) return { ...deterministic, ai: noModel(access.reason) };
 * ```
 */
export async function modelAccess(
  database: Kysely<Database>,
  configuration: Pick<Configuration, 'ai'>,
  request: { organizationId: string; projectId: string; feature: AiFeature; now?: Date },
): Promise<ModelAccess> {
  const { ai } = configuration;
  if (ai === undefined) return { allowed: false, reason: NO_MODEL_REASON, capped: false };
  const settings = await readAiSettings(database, request.organizationId);
  if (!settings.enabled) {
    return {
      allowed: false,
      reason:
        "AI is off for this organization: an admin turns it on in the organization's AI settings. This is the deterministic result.",
      capped: false,
    };
  }
  if (!settings.features.includes(request.feature)) {
    return {
      allowed: false,
      reason: `The organization's AI settings do not let the model answer "${request.feature}". This is the deterministic result.`,
      capped: false,
    };
  }
  if (settings.monthlyTokenCap !== null) {
    const now = request.now ?? new Date();
    const used = await tokensUsed(database, request.organizationId, now);
    if (used >= settings.monthlyTokenCap) {
      return {
        allowed: false,
        reason: `The organization used its monthly AI token cap (${used} of ${settings.monthlyTokenCap} tokens in ${monthOf(now).slice(0, 7)}); it resets on the first of next month, or an admin raises it.`,
        capped: true,
      };
    }
  }
  const now = request.now ?? new Date();
  const capped = await aiTokenCapReached(database, request.organizationId, now);
  if (capped !== undefined) {
    return {
      allowed: false,
      reason: `The organization used its monthly cap of AI tokens (${capped.used} of ${capped.cap} tokens in ${monthOf(now).slice(0, 7)}, every project); it resets on the first of next month, or an admin raises it (PATCH /v1/orgs/{orgId}/billing/caps).`,
      capped: true,
    };
  }
  return {
    allowed: true,
    model: modelOf(ai),
    name: ai.model,
    organizationId: request.organizationId,
    projectId: request.projectId,
    feature: request.feature,
  };
}

/**
 * Counts a use of the model: one request and its tokens, added to the organization's month, project
 * and feature, and the tokens to the project's usage of the day (`ai_tokens`), in one transaction.
 */
export async function recordUsage(
  database: Kysely<Database>,
  access: Extract<ModelAccess, { allowed: true }>,
  usage: Pick<LanguageModelUsage, 'inputTokens' | 'outputTokens'>,
  at: Date = new Date(),
): Promise<void> {
  const input = usage.inputTokens ?? 0;
  const output = usage.outputTokens ?? 0;
  await database.transaction().execute(async (transaction) => {
    await meter(transaction, access.projectId, { ai_tokens: input + output }, at);
    await transaction
      .insertInto('ai_usage')
      .values({
        organization_id: access.organizationId,
        month: monthOf(at),
        project_id: access.projectId,
        feature: access.feature,
        requests: 1,
        input_tokens: input,
        output_tokens: output,
      })
      .onConflict((conflict) =>
        conflict.columns(['organization_id', 'month', 'project_id', 'feature']).doUpdateSet({
          requests: sql`ai_usage.requests + 1`,
          input_tokens: sql`ai_usage.input_tokens + ${input}`,
          output_tokens: sql`ai_usage.output_tokens + ${output}`,
          updated_at: at,
        }),
      )
      .execute();
  });
}
