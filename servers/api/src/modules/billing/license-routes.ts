import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { forPeopleOnly } from '../../platform/http/authentication.ts';
import type { Billing } from './billing.ts';
import { LICENSE_GRACE_DAYS, licensePayloadSchema } from './license.ts';
import { planLimitsSchema, planNameSchema } from './plans.ts';

const licenseViewSchema = z.object({
  status: z
    .enum(['valid', 'grace', 'expired', 'invalid', 'missing'])
    .describe(
      `grace: expired less than ${LICENSE_GRACE_DAYS} days ago, its plan still applies; expired, invalid, missing: the free plan`,
    ),
  plan: planNameSchema.describe('The plan in force for the deployment'),
  limits: planLimitsSchema,
  license: licensePayloadSchema
    .safeExtend({ graceEndsAt: z.iso.datetime() })
    .optional()
    .describe("The license's content, when its signature verified"),
  installedAt: z.iso.datetime().optional(),
  graceDays: z.int(),
  warning: z.string().optional().describe('Why the free plan applies, or soon will'),
});

/**
 * `GET /v1/license`: the deployment's license, its plan and limits in force, and a warning when
 * it expired, is in its grace period or does not verify. Any signed-in person (it is the
 * deployment's, not an organization's); the server logs the warning at start-up and whenever the
 * license is read. servers/api/README.md, Billing.
 */
export default async function licenseRoutes(fastify: FastifyInstance, options: { billing: Billing }) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const { billing } = options;
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);

  fastify.addHook('onReady', async () => {
    const standing = await billing.license();
    if (standing.warning !== undefined) fastify.log.warn({ license: standing.status }, standing.warning);
  });

  routes.get(
    '/license',
    {
      schema: {
        summary: "The deployment's license: plan, limits, dates, and a warning when it is not in force",
        response: { 200: licenseViewSchema },
      },
    },
    async (request) => {
      const standing = await billing.license();
      if (standing.warning !== undefined) request.log.warn({ license: standing.status }, standing.warning);
      return { ...standing, graceDays: LICENSE_GRACE_DAYS };
    },
  );
}
