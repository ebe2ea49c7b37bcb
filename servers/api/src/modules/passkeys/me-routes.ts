import rateLimit from '@fastify/rate-limit';
import { generateRegistrationOptions, verifyRegistrationResponse } from '@simplewebauthn/server';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import { forPeopleOnly, personOf } from '../../platform/http/authentication.ts';
import { forbidden, invalid, notFound, unauthorized } from '../../platform/http/errors.ts';
import {
  createLimiter,
  findUserById,
  SIGN_IN_LIMITS,
  sessionStartedAt,
  verifyPassword,
} from '../accounts/index.ts';
import {
  CHALLENGE_TTL_MS,
  deletePasskey,
  insertPasskey,
  listPasskeys,
  MAX_PASSKEYS_PER_PERSON,
  renamePasskey,
  saveChallenge,
  useChallenge,
} from './repository.ts';
import {
  asRegistrationResponse,
  challengeOf,
  passkeyViewSchema,
  registrationResponseSchema,
  relyingPartyOf,
  toPasskeyView,
  userHandleOf,
} from './webauthn.ts';

/**
 * Without the password, a session that signed in this recently may add a passkey (people who sign
 * in with OAuth or SSO only have no password they know).
 */
const RECENT_SIGN_IN_MS = 10 * 60_000;

const nameSchema = z.string().trim().min(1).max(100);
const passkeyParams = z.object({ id: z.string().min(1).max(64) });

/** `PublicKeyCredentialCreationOptionsJSON` / `…RequestOptionsJSON`, for `@simplewebauthn/browser`. */
export const ceremonyOptionsSchema = z
  .looseObject({ challenge: z.string() })
  .describe('WebAuthn options as JSON: pass them to `startRegistration` / `startAuthentication`');

/**
 * `/v1/me/passkeys`: a person's passkeys (cookie only, with `X-Service-CSRF`): list, register
 * (options, then verify the browser's answer), rename, remove.
 */
export default async function passkeyMeRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const relyingParty = relyingPartyOf(fastify.configuration);
  routes.addHook('onRequest', fastify.authenticateCaller);
  forPeopleOnly(fastify);
  await fastify.register(rateLimit, { global: false });
  const checks = createLimiter(
    fastify,
    'me-passkeys:account',
    SIGN_IN_LIMITS.signedInChecks.perAccount,
    'passkey registrations started (and password checks) for this account',
  );

  async function currentUser(userId: string) {
    const user = await findUserById(database, userId);
    if (user === undefined)
      throw unauthorized('The session has ended (signed out or expired): sign in again');
    return user;
  }

  routes.get(
    '/',
    {
      schema: {
        summary: "The signed-in person's passkeys",
        response: {
          200: z.object({ items: z.array(passkeyViewSchema) }),
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request) => {
      const person = personOf(request);
      return { items: (await listPasskeys(database, person.userId)).map(toPasskeyView) };
    },
  );

  routes.post(
    '/registration/options',
    {
      schema: {
        summary: 'Start adding a passkey, with the password (or within 10 minutes of signing in)',
        description:
          'The WebAuthn creation options for `startRegistration` (a discoverable credential, user verification required), with a challenge that works once within 5 minutes; then `POST /v1/me/passkeys/registration/verify`. The password is asked again, so that a session someone else got hold of cannot add a way in of its own; a session that signed in within the last 10 minutes may leave it out (people who sign in with OAuth or SSO only know no password). 403 for a wrong or missing password; 400 at 20 passkeys.',
        body: z.strictObject({ password: z.string().max(1024).optional() }),
        response: {
          200: ceremonyOptionsSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      await checks(request, reply, person.userId);
      const user = await currentUser(person.userId);
      const { password } = request.body ?? {};
      if (password !== undefined) {
        if (!(await verifyPassword(user.password_hash, password))) throw forbidden('The password is wrong');
      } else {
        const startedAt = await sessionStartedAt(database, person.sessionId);
        if (startedAt === undefined || Date.now() - startedAt.getTime() > RECENT_SIGN_IN_MS)
          throw forbidden('Enter your password (or sign in again) to add a passkey');
      }
      const existing = await listPasskeys(database, user.id);
      if (existing.length >= MAX_PASSKEYS_PER_PERSON)
        throw invalid(`You have ${MAX_PASSKEYS_PER_PERSON} passkeys already: remove one first`);
      const options = await generateRegistrationOptions({
        rpName: relyingParty.name,
        rpID: relyingParty.id,
        userID: userHandleOf(user.id),
        userName: user.email,
        userDisplayName: user.name ?? user.email,
        timeout: CHALLENGE_TTL_MS,
        attestationType: 'none',
        excludeCredentials: existing.map((passkey) => ({
          id: passkey.credential_id,
          transports: passkey.transports,
        })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      await saveChallenge(database, options.challenge, 'registration', user.id);
      return options as typeof options & Record<string, unknown>;
    },
  );

  routes.post(
    '/registration/verify',
    {
      schema: {
        summary: "Finish adding a passkey: the browser's answer to the options (`startRegistration`)",
        description:
          'Checks the challenge (this person\'s, unused, within 5 minutes; used up by this call), the origin (the dashboard\'s), the relying party id (the host of `SVC_APP_URL`) and that the authenticator verified the person (PIN, biometrics). `name` defaults to "Passkey N". 400 when any check fails or the passkey is registered already.',
        body: z.strictObject({ response: registrationResponseSchema, name: nameSchema.optional() }),
        response: {
          201: passkeyViewSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      const { response, name } = request.body;
      const challenge = challengeOf(response.response.clientDataJSON);
      if (
        challenge === undefined ||
        !(await useChallenge(database, challenge, 'registration', person.userId))
      )
        throw invalid('This passkey registration has expired (or was finished already): start again');
      let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
      try {
        verification = await verifyRegistrationResponse({
          response: asRegistrationResponse(response),
          expectedChallenge: challenge,
          expectedOrigin: relyingParty.origins,
          expectedRPID: relyingParty.id,
          requireUserVerification: true,
        });
      } catch (error) {
        throw invalid(`The passkey was not accepted: ${(error as Error).message}`);
      }
      if (!verification.verified) throw invalid('The passkey was not accepted');
      const info = verification.registrationInfo;
      const count = (await listPasskeys(database, person.userId)).length;
      const passkey = await insertPasskey(database, {
        userId: person.userId,
        credentialId: info.credential.id,
        publicKey: info.credential.publicKey,
        counter: info.credential.counter,
        transports: info.credential.transports ?? response.response.transports ?? [],
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        name: name ?? `Passkey ${count + 1}`,
      });
      if (passkey === undefined) throw invalid('This passkey is registered already');
      await recordPersonAudit(database, person.userId, auditOrigin(request), {
        action: 'user.passkey_added',
        target: { type: 'passkey', id: passkey.id },
        details: { name: passkey.name, deviceType: passkey.device_type },
      });
      return reply.code(201).send(toPasskeyView(passkey));
    },
  );

  routes.patch(
    '/:id',
    {
      schema: {
        summary: 'Rename a passkey',
        params: passkeyParams,
        body: z.strictObject({ name: nameSchema }),
        response: {
          200: passkeyViewSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          404: errorBodySchema,
        },
      },
    },
    async (request) => {
      const person = personOf(request);
      const passkey = await renamePasskey(database, person.userId, request.params.id, request.body.name);
      if (passkey === undefined) throw notFound('No such passkey');
      return toPasskeyView(passkey);
    },
  );

  routes.delete(
    '/:id',
    {
      schema: {
        summary: 'Remove a passkey: it no longer signs in',
        description:
          "404 when the person has no such passkey (another person's passkeys are not theirs to know).",
        params: passkeyParams,
        response: { 204: z.null(), 401: errorBodySchema, 403: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const person = personOf(request);
      const passkey = await deletePasskey(database, person.userId, request.params.id);
      if (passkey === undefined) throw notFound('No such passkey');
      await recordPersonAudit(database, person.userId, auditOrigin(request), {
        action: 'user.passkey_removed',
        target: { type: 'passkey', id: passkey.id },
        details: { name: passkey.name },
      });
      return reply.code(204).send(null);
    },
  );
}
