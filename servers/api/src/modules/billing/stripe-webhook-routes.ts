import { errorBodySchema } from '@svc/protocol';
import { verifyWebhook, WebhookVerificationError } from '@svc/webhook-verify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type Stripe from 'stripe';
import { z } from 'zod';
import { invalid, notFound } from '../../platform/http/errors.ts';
import type { BillingProvider } from './provider.ts';
import { handleStripeEvent, type OnBillingEvent } from './stripe-events.ts';
import type { StripeProvider } from './stripe-provider.ts';

/** The largest webhook body read; Stripe's events are a few KB. */
const STRIPE_WEBHOOK_BODY_LIMIT = 1024 * 1024;

export interface StripeWebhookRoutesOptions {
  provider: BillingProvider;
  onBillingEvent?: OnBillingEvent;
}

function isStripe(provider: BillingProvider): provider is StripeProvider {
  return provider.name === 'stripe';
}

/**
 * `POST /v1/billing/stripe/webhook`: Stripe's events, public (no cookie, no token), verified
 * with the `Stripe-Signature` header over the exact bytes received (`@svc/webhook-verify`, whose
 * scheme is Stripe's) against `SVC_STRIPE_WEBHOOK_SECRET`, within 300 s. The body is read raw,
 * at most 1 MiB (413 beyond, counted while reading). A bad signature is 400 and changes nothing;
 * an event is handled once (a redelivery answers 200 and changes nothing); types not handled
 * answer 200. Without Stripe configured: 404. servers/api/README.md, Billing.
 */
export default async function stripeWebhookRoutes(
  fastify: FastifyInstance,
  options: StripeWebhookRoutesOptions,
) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const { provider } = options;
  // This context reads its bodies as bytes: the signature covers them exactly.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT },
    (_request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void) =>
      done(null, body),
  );

  routes.post(
    '/stripe/webhook',
    {
      bodyLimit: STRIPE_WEBHOOK_BODY_LIMIT,
      schema: {
        summary: "Stripe's webhook events (public: verified by the Stripe-Signature header)",
        description:
          "Handles checkout.session.completed, customer.subscription.created/updated/deleted, invoice.paid and invoice.payment_failed: the organization's subscription is updated and billing.event emitted. Other types answer 200 and change nothing; so does a redelivered event. 400 for a signature that does not verify (nothing changes), 413 over 1 MiB, 404 when Stripe billing is not configured.",
        headers: z.looseObject({
          'stripe-signature': z.string().max(8192).optional().describe('t=<unix s>,v1=<hex>'),
        }),
        response: {
          200: z.object({
            received: z.literal(true),
            outcome: z.enum([
              'applied',
              'duplicate',
              'ignored',
              'stale',
              'other_subscription',
              'unknown_organization',
            ]),
          }),
          400: errorBodySchema,
          404: errorBodySchema,
          413: errorBodySchema,
        },
      },
    },
    async (request) => {
      if (!isStripe(provider)) throw notFound('Stripe billing is not configured on this deployment');
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let event: Stripe.Event;
      try {
        const verified = await verifyWebhook(
          body,
          request.headers['stripe-signature'],
          provider.webhookSecret,
        );
        event = verified as unknown as Stripe.Event;
      } catch (error) {
        if (!WebhookVerificationError.isInstance(error)) throw error;
        // The detailed reason (never the secret) goes to the log; the answer says no more.
        request.log.warn({ reason: error.code, detail: error.message }, 'a Stripe webhook did not verify');
        throw invalid('The Stripe-Signature header does not verify this body');
      }
      if (typeof event.created !== 'number' || typeof event.data?.object !== 'object')
        throw invalid('Not a Stripe event: created and data.object are required');
      const outcome = await handleStripeEvent(
        {
          database: fastify.database,
          provider,
          appUrl: fastify.configuration.appUrl,
          log: request.log,
          onBillingEvent: options.onBillingEvent,
        },
        event,
      );
      request.log.info({ stripeEvent: event.id, type: event.type, outcome }, 'Stripe event');
      return { received: true as const, outcome };
    },
  );
}
