import type { FastifyInstance, FastifyRequest } from 'fastify';
import { personOf, type SignedInPerson } from '../../platform/http/authentication.ts';
import { forbidden, notFound } from '../../platform/http/errors.ts';
import { findMembership, type Membership } from './repository.ts';
import { administers } from './roles.ts';

/** The caller's membership of the organization of the route's `:orgId`. */
export type OrganizationAccess = Membership & { person: SignedInPerson };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An `/v1/orgs/:orgId/…` route only admins and owners may call (read by {@link checkMembership}). */
    administer?: boolean;
  }
  interface FastifyRequest {
    /** The caller's membership of the route's organization (set by {@link checkMembership}). */
    membership: OrganizationAccess | null;
  }
}

/**
 * Adds an onRequest hook (after authentication) to the plugin's routes with an `:orgId`: the
 * signed-in person's membership of that organization goes to `request.membership`; a person who is
 * no member gets 404 (the organization's existence is not theirs to know), and one whose role does
 * not administer it gets 403 on routes with `config.administer`. Before the body is read, so a
 * refused request is refused whatever it sends.
 */
export function checkMembership(fastify: FastifyInstance): void {
  fastify.decorateRequest('membership', null);
  fastify.addHook('onRequest', async (request: FastifyRequest) => {
    const organizationId = (request.params as { orgId?: string }).orgId;
    if (organizationId === undefined) return;
    const person = personOf(request);
    const found =
      organizationId.length > 64
        ? undefined
        : await findMembership(fastify.database, organizationId, person.userId);
    if (found === undefined) throw notFound(`No organization ${organizationId.slice(0, 64)}`);
    if (request.routeOptions.config.administer === true && !administers(found.role))
      throw forbidden(`Your role (${found.role}) does not allow this: it takes an admin or an owner`);
    request.membership = { ...found, person };
  });
}

/** The membership {@link checkMembership} found for the request. */
export function membershipOf(request: FastifyRequest): OrganizationAccess {
  if (request.membership === null) throw new Error('checkMembership did not run for this route');
  return request.membership;
}
