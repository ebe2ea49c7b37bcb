import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { z } from 'zod';
import { auditOrigin, recordAudit } from '../../platform/audit.ts';
import type { AiFeature } from '../../platform/database/tables/ai-settings.table.ts';
import { forPeopleOnly } from '../../platform/http/authentication.ts';
import { checkMembership, membershipOf } from '../orgs/index.ts';
import { AI_FEATURES, readAiSettings, tokensUsed } from './model.ts';

const orgParams = z.object({ orgId: z.string().max(64) });
const featureSchema = z.enum(AI_FEATURES as [AiFeature, ...AiFeature[]]);

const settingsViewSchema = z.object({
  organizationId: z.string(),
  /** Whether the model may answer for the organization's projects (off until an admin turns it on). */
  enabled: z.boolean(),
  /** Tokens (input and output) per calendar month, UTC; null: no cap. */
  monthlyTokenCap: z.int().nullable(),
  /** The features that may use the model. */
  features: z.array(featureSchema),
  /** Tokens used this month. */
  usedThisMonth: z.int(),
  /** The server's model: configured by the operator (SVC_AI_BASE_URL, SVC_AI_MODEL), or none. */
  model: z.object({ configured: z.boolean(), name: z.string().optional() }),
});

const settingsChangeSchema = z
  .strictObject({
    enabled: z.boolean().optional(),
    monthlyTokenCap: z.int().min(0).max(1_000_000_000_000).nullable().optional(),
    features: z.array(featureSchema).max(AI_FEATURES.length).optional(),
  })
  .refine((change) => Object.keys(change).length > 0, {
    message: 'give at least one of enabled, monthlyTokenCap, features',
  });

/**
 * `/v1/orgs/{orgId}/ai/settings`: whether the server's model answers for the organization, its
 * monthly token cap and the features allowed. For people (the cookie): members read, admins and
 * owners change (audited as `ai.settings_changed`). servers/api/README.md, The model.
 */
export default async function aiSettingsRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  checkMembership(fastify);

  async function view(organizationId: string): Promise<z.infer<typeof settingsViewSchema>> {
    const [settings, used] = await Promise.all([
      readAiSettings(database, organizationId),
      tokensUsed(database, organizationId, new Date()),
    ]);
    const { ai } = fastify.configuration;
    return {
      organizationId,
      ...settings,
      usedThisMonth: used,
      model: ai === undefined ? { configured: false } : { configured: true, name: ai.model },
    };
  }

  routes.get(
    '/:orgId/ai/settings',
    {
      schema: {
        summary: "The organization's AI settings: on or off, monthly token cap, features, this month's use",
        params: orgParams,
        response: { 200: settingsViewSchema },
      },
    },
    async (request) => view(request.params.orgId),
  );

  routes.patch(
    '/:orgId/ai/settings',
    {
      config: { administer: true },
      schema: {
        summary: "Change the organization's AI settings (admins and owners)",
        params: orgParams,
        body: settingsChangeSchema,
        response: { 200: settingsViewSchema },
      },
    },
    async (request) => {
      const { orgId } = request.params;
      const membership = membershipOf(request);
      const change = request.body;
      await database.transaction().execute(async (transaction) => {
        const current = await readAiSettings(transaction, orgId);
        const next = {
          enabled: change.enabled ?? current.enabled,
          monthlyTokenCap:
            change.monthlyTokenCap === undefined ? current.monthlyTokenCap : change.monthlyTokenCap,
          features:
            change.features === undefined
              ? current.features
              : AI_FEATURES.filter((feature) => change.features?.includes(feature)),
        };
        await transaction
          .insertInto('ai_settings')
          .values({
            organization_id: orgId,
            enabled: next.enabled,
            monthly_token_cap: next.monthlyTokenCap,
            features: JSON.stringify(next.features),
            updated_by: membership.person.userId,
          })
          .onConflict((conflict) =>
            conflict.column('organization_id').doUpdateSet({
              enabled: next.enabled,
              monthly_token_cap: next.monthlyTokenCap,
              features: JSON.stringify(next.features),
              updated_by: membership.person.userId,
              updated_at: sql`now()`,
            }),
          )
          .execute();
        await recordAudit(
          transaction,
          orgId,
          { type: 'user', id: membership.person.userId },
          auditOrigin(request),
          {
            action: 'ai.settings_changed',
            target: { type: 'organization', id: orgId },
            details: { from: current, to: next },
          },
        );
      });
      return view(orgId);
    },
  );
}
