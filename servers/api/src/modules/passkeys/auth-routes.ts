import rateLimit from '@fastify/rate-limit';
import { generateAuthenticationOptions, verifyAuthenticationResponse } from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import { forbidden, invalid, unauthorized } from '../../platform/http/errors.ts';
import {
  createLimiter,
  findUserById,
  refuseForeignOrigins,
  SIGN_IN_LIMITS,
  signedInViewSchema,
  signIn,
} from '../accounts/index.ts';
import { ceremonyOptionsSchema } from './me-routes.ts';
import {
  CHALLENGE_TTL_MS,
  findPasskeyByCredentialId,
  recordPasskeyUse,
  saveChallenge,
  useChallenge,
} from './repository.ts';
import {
  asAuthenticationResponse,
  authenticationResponseSchema,
  challengeOf,
  relyingPartyOf,
  transportsOf,
} from './webauthn.ts';

/**
 * The limits of passkey sign-in, per client address and per account (the passkey's owner): as
 * password sign-in's; options (each keeps a challenge for 5 minutes) 60 per address per 15 minutes.
 */
const PASSKEY_LIMITS = {
  options: { perAddress: { max: 60, windowMs: 15 * 60_000 } },
  verify: SIGN_IN_LIMITS.login,
} as const;

/**
 * `/auth/passkeys`: sign in with a passkey. Discoverable credentials: the options name no
 * account, the authenticator offers the person's passkeys for this site, and the answer names
 * the credential. A passkey sign-in asks no TOTP code (the authenticator verified the person).
 */
export default async function passkeyAuthRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const database = fastify.database;
  const { publicUrl } = fastify.configuration;
  const relyingParty = relyingPartyOf(fastify.configuration);
  routes.addHook('onRequest', refuseForeignOrigins(fastify.configuration));
  await fastify.register(rateLimit, { global: false });
  const optionsPerAddress = createLimiter(
    fastify,
    'passkey-options:ip',
    PASSKEY_LIMITS.options.perAddress,
    'passkey sign-ins started from this address',
  );
  const verifyPerAddress = createLimiter(
    fastify,
    'passkey-login:ip',
    PASSKEY_LIMITS.verify.perAddress,
    'passkey sign-in attempts from this address',
  );
  const verifyPerAccount = createLimiter(
    fastify,
    'passkey-login:account',
    PASSKEY_LIMITS.verify.perAccount,
    'passkey sign-in attempts for this account',
  );

  routes.post(
    '/login/options',
    {
      schema: {
        summary: 'Start a passkey sign-in: the WebAuthn request options (for `startAuthentication`)',
        description:
          'No account is named: the authenticator offers its passkeys for this site (discoverable credentials), user verification required. The challenge works once, within 5 minutes; then `POST /auth/passkeys/login/verify`.',
        response: { 200: ceremonyOptionsSchema, 403: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      await optionsPerAddress(request, reply, request.ip);
      const options = await generateAuthenticationOptions({
        rpID: relyingParty.id,
        userVerification: 'required',
        timeout: CHALLENGE_TTL_MS,
      });
      await saveChallenge(database, options.challenge, 'authentication', null);
      return options as typeof options & Record<string, unknown>;
    },
  );

  routes.post(
    '/login/verify',
    {
      schema: {
        summary: "Finish a passkey sign-in with the browser's answer: the session cookie and the CSRF token",
        description:
          'Answers as `POST /auth/login` (the cookie and `{ user, csrfToken }`); no TOTP code is asked, the authenticator verified the person. 401 for an unknown passkey, a used, expired or unknown challenge, a wrong origin or relying party, a missing user verification, a bad signature, or a signature counter that did not go up (a cloned authenticator; audited as `user.passkey_counter_regressed`).',
        body: z.strictObject({ response: authenticationResponseSchema }),
        response: {
          200: signedInViewSchema,
          400: errorBodySchema,
          401: errorBodySchema,
          403: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      await verifyPerAddress(request, reply, request.ip);
      const { response } = request.body;
      const expired = 'This passkey sign-in has expired (or was finished already): start again';
      const challenge = challengeOf(response.response.clientDataJSON);
      if (challenge === undefined) throw invalid('The passkey answer has no readable clientDataJSON');
      if (!(await useChallenge(database, challenge, 'authentication', null))) throw unauthorized(expired);
      const passkey = await findPasskeyByCredentialId(database, response.id);
      if (passkey === undefined)
        throw unauthorized('This passkey is not known here (removed, or made for another account)');
      await verifyPerAccount(request, reply, passkey.user_id);
      const userHandle = response.response.userHandle;
      if (
        userHandle !== undefined &&
        userHandle !== '' &&
        isoBase64URL.toUTF8String(userHandle) !== passkey.user_id
      )
        throw unauthorized('The passkey does not belong to the account it names');
      const stored = Number(passkey.counter);
      let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
      try {
        verification = await verifyAuthenticationResponse({
          response: asAuthenticationResponse(response),
          expectedChallenge: challenge,
          expectedOrigin: relyingParty.origins,
          expectedRPID: relyingParty.id,
          requireUserVerification: true,
          // The counter is checked below, where a regression is audited.
          credential: {
            id: passkey.credential_id,
            publicKey: new Uint8Array(passkey.public_key),
            counter: 0,
            transports: transportsOf(passkey),
          },
        });
      } catch (error) {
        throw unauthorized(`The passkey was not accepted: ${(error as Error).message}`);
      }
      if (!verification.verified) throw unauthorized('The passkey was not accepted');
      const counter = verification.authenticationInfo.newCounter;
      // An authenticator that counts signs with a higher counter each time; one that went back
      // (or stayed) is a copy of the key in use elsewhere.
      const regressed = (stored > 0 || counter > 0) && counter <= stored;
      if (regressed || !(await recordPasskeyUse(database, passkey.id, stored, counter))) {
        await recordPersonAudit(database, passkey.user_id, auditOrigin(request), {
          action: 'user.passkey_counter_regressed',
          target: { type: 'passkey', id: passkey.id },
          details: { storedCounter: stored, receivedCounter: counter },
        });
        throw unauthorized(
          'The passkey was not accepted: its signature counter went back (a copy of the passkey may be in use)',
        );
      }
      const user = await findUserById(database, passkey.user_id);
      if (user === undefined) throw unauthorized(expired);
      if (user.email_verified_at === null)
        throw forbidden('Verify your e-mail address first: follow the link in the e-mail we sent to it');
      return signIn(database, publicUrl, request, reply, user, 'passkey');
    },
  );
}
