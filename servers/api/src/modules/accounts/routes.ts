import rateLimit from '@fastify/rate-limit';
import { errorBodySchema } from '@svc/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditOrigin, recordPersonAudit } from '../../platform/audit.ts';
import { checkCsrf, SESSION_COOKIE } from '../../platform/http/authentication.ts';
import { forbidden, invalid, unauthorized } from '../../platform/http/errors.ts';
import { createId } from '../../platform/ids.ts';
import {
  existingAccountMessage,
  magicLinkLink,
  magicLinkMessage,
  noAccountMessage,
  passwordResetLink,
  passwordResetMessage,
  verificationLink,
  verificationMessage,
} from './emails.ts';
import { createMfaChallenge, findMfaChallenge, mfaEnabled, useMfaChallenge, useSecondFactor } from './mfa.ts';
import { checkPassword, hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { createLimiter, SIGN_IN_LIMITS } from './rate-limits.ts';
import {
  createMagicLinkToken,
  createPasswordResetToken,
  createVerificationToken,
  deleteSessionBySecret,
  findLiveSession,
  findUserByEmail,
  findUserById,
  insertUser,
  updatePasswordHash,
  useMagicLinkToken,
  usePasswordResetToken,
  useVerificationToken,
} from './repository.ts';
import { refuseForeignOrigins, sessionCookieOptions, signIn } from './sign-in.ts';
import { signedInViewSchema, toUserView, type UserView, userViewSchema } from './views.ts';

const emailSchema = z.email().max(254);
/** Checked by the password policy (8..256 characters, not a common one) for its own messages. */
const passwordSchema = z.string().max(1024);

const signupBodySchema = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  name: z.string().trim().min(1).max(200).optional(),
});

const loginBodySchema = z.strictObject({ email: emailSchema, password: passwordSchema });

/** The answer of a right password when the person has two-factor sign-in on. */
const mfaRequiredSchema = z.object({
  mfaRequired: z.literal(true),
  mfaToken: z.string().describe('For `POST /auth/mfa/verify`, once, within 5 minutes'),
});

/**
 * `/auth`: sign-up, e-mail verification, sign-in and sign-out. Public routes; none of their
 * answers tells whether an address has an account (see servers/api/README.md, Accounts).
 */
export default async function accountRoutes(fastify: FastifyInstance) {
  const routes = fastify.withTypeProvider<ZodTypeProvider>();
  const mailer = fastify.mailer;
  const { appUrl, publicUrl } = fastify.configuration;
  const database = fastify.database;

  routes.addHook('onRequest', refuseForeignOrigins(fastify.configuration));

  await fastify.register(rateLimit, { global: false });
  const limits = SIGN_IN_LIMITS;
  const loginPerAddress = createLimiter(
    fastify,
    'login:ip',
    limits.login.perAddress,
    'sign-in attempts from this address',
  );
  const loginPerAccount = createLimiter(
    fastify,
    'login:account',
    limits.login.perAccount,
    'sign-in attempts for this account',
  );
  const signupPerAddress = createLimiter(
    fastify,
    'signup:ip',
    limits.signup.perAddress,
    'sign-ups from this address',
  );
  const signupPerAccount = createLimiter(
    fastify,
    'signup:account',
    limits.signup.perAccount,
    'sign-ups with this e-mail address',
  );
  const verifyPerAddress = createLimiter(
    fastify,
    'verify:ip',
    limits.verifyEmail.perAddress,
    'verification attempts from this address',
  );

  const forgotPerAddress = createLimiter(
    fastify,
    'forgot:ip',
    limits.forgotPassword.perAddress,
    'password reset requests from this address',
  );
  const forgotPerAccount = createLimiter(
    fastify,
    'forgot:account',
    limits.forgotPassword.perAccount,
    'password reset requests for this e-mail address',
  );
  const resetPerAddress = createLimiter(
    fastify,
    'reset:ip',
    limits.resetPassword.perAddress,
    'password reset attempts from this address',
  );

  const mfaPerAddress = createLimiter(
    fastify,
    'mfa:ip',
    limits.mfa.perAddress,
    'two-factor codes from this address',
  );
  const mfaPerAccount = createLimiter(
    fastify,
    'mfa:account',
    limits.mfa.perAccount,
    'two-factor codes for this account',
  );

  const magicPerAddress = createLimiter(
    fastify,
    'magic:ip',
    limits.magicLink.perAddress,
    'sign-in link requests from this address',
  );
  const magicPerAccount = createLimiter(
    fastify,
    'magic:account',
    limits.magicLink.perAccount,
    'sign-in link requests for this e-mail address',
  );
  const magicUsePerAddress = createLimiter(
    fastify,
    'magic-use:ip',
    limits.magicLinkUse.perAddress,
    'sign-in link attempts from this address',
  );

  routes.post(
    '/signup',
    {
      schema: {
        summary: 'Create an account; a verification e-mail with a one-time link follows',
        description:
          'The answer is the same whether or not the address already has an account: the owner of an existing account gets an e-mail saying so instead.',
        body: signupBodySchema,
        response: { 201: z.object({ user: userViewSchema }), 400: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { email, password, name } = request.body;
      await signupPerAddress(request, reply, request.ip);
      await signupPerAccount(request, reply, email.toLowerCase());
      const problem = checkPassword(password);
      if (problem !== undefined) throw invalid(problem);
      const passwordHash = await hashPassword(password);
      const created = await insertUser(database, { email, name, passwordHash });
      if (created !== undefined) {
        const token = await createVerificationToken(database, created);
        await mailer.send(
          verificationMessage({ to: created.email, name, link: verificationLink(appUrl, token) }),
        );
        return reply.code(201).send({ user: toUserView(created) });
      }
      // The address has an account: its owner is told by e-mail, the answer looks like a new one.
      const existing = await findUserByEmail(database, email);
      const unverified = existing !== undefined && existing.email_verified_at === null;
      const link = unverified
        ? verificationLink(appUrl, await createVerificationToken(database, existing))
        : undefined;
      await mailer.send(
        existingAccountMessage({
          to: existing?.email ?? email,
          signInUrl: `${appUrl}/login`,
          ...(link === undefined ? {} : { verificationLink: link }),
        }),
      );
      const lookalike: UserView = {
        id: createId('usr'),
        email,
        ...(name === undefined ? {} : { name }),
        createdAt: new Date().toISOString(),
      };
      return reply.code(201).send({ user: lookalike });
    },
  );

  routes.post(
    '/verify-email',
    {
      schema: {
        summary: "Verify an account's e-mail address with the token of its link",
        body: z.strictObject({ token: z.string().min(1).max(128) }),
        response: { 200: z.object({ user: userViewSchema }), 400: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      await verifyPerAddress(request, reply, request.ip);
      const user = await useVerificationToken(database, request.body.token);
      if (user === undefined)
        throw invalid(
          'This verification link does not work (already used, expired or unknown): sign up again for a new one',
        );
      return { user: toUserView(user) };
    },
  );

  routes.post(
    '/login',
    {
      schema: {
        summary: 'Sign in with e-mail and password: the session cookie and the CSRF token',
        description:
          'Sets the `service_session` cookie (HttpOnly, SameSite=Lax). A wrong password and an unknown address get the same 401. With two-factor sign-in on: `{ mfaRequired: true, mfaToken }` and no cookie; then `POST /auth/mfa/verify`.',
        body: loginBodySchema,
        response: {
          200: z.union([signedInViewSchema, mfaRequiredSchema]),
          401: errorBodySchema,
          403: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body;
      await loginPerAddress(request, reply, request.ip);
      await loginPerAccount(request, reply, email.toLowerCase());
      const user = await findUserByEmail(database, email);
      const matches = await verifyPassword(user?.password_hash, password);
      if (user === undefined || !matches) throw unauthorized('The e-mail address or the password is wrong');
      if (user.email_verified_at === null)
        throw forbidden('Verify your e-mail address first: follow the link in the e-mail we sent to it');
      if (needsRehash(user.password_hash))
        await updatePasswordHash(database, user.id, await hashPassword(password));
      await request.server.signInGate(user, 'password', { checkOnly: true });
      if (await mfaEnabled(database, user.id))
        return { mfaRequired: true as const, mfaToken: await createMfaChallenge(database, user.id) };
      return signIn(database, publicUrl, request, reply, user, 'password');
    },
  );

  routes.post(
    '/logout',
    {
      schema: {
        summary: 'Sign out: ends the session of the cookie (X-Service-CSRF required) and clears it',
        description:
          'Answers 204, also when the request had no session (the cookie is cleared all the same); 403 without the CSRF token.',
      },
    },
    async (request, reply) => {
      const secret = request.cookies[SESSION_COOKIE];
      if (secret !== undefined && secret !== '' && secret.length <= 128) {
        const session = await findLiveSession(database, secret);
        if (session !== undefined) {
          checkCsrf(request, session.csrfToken);
          await deleteSessionBySecret(database, secret);
        }
      }
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(publicUrl));
      return reply.code(204).send();
    },
  );

  routes.post(
    '/password/forgot',
    {
      schema: {
        summary: 'Ask for a password reset: an e-mail with a one-time link follows',
        description:
          'Answers 202 whether or not the address has an account: an address without one gets an e-mail saying so instead of a link. The link works once, within 1 hour.',
        body: z.strictObject({ email: emailSchema }),
        response: { 202: z.object({}), 400: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { email } = request.body;
      await forgotPerAddress(request, reply, request.ip);
      await forgotPerAccount(request, reply, email.toLowerCase());
      const user = await findUserByEmail(database, email);
      if (user === undefined)
        await mailer.send(
          noAccountMessage({
            to: email,
            signUpUrl: `${appUrl}/signup`,
            subject: 'Reset your password',
            asked: 'to reset the password of an account',
          }),
        );
      else {
        const token = await createPasswordResetToken(database, user);
        await mailer.send(passwordResetMessage({ to: user.email, link: passwordResetLink(appUrl, token) }));
      }
      return reply.code(202).send({});
    },
  );

  routes.post(
    '/password/reset',
    {
      schema: {
        summary: 'Choose a new password with the token of a reset link; ends every session of the account',
        description:
          'The password follows the sign-up rules. 400 for a used, expired or unknown token. Every session of the account ends (sign in again with the new password).',
        body: z.strictObject({ token: z.string().min(1).max(128), password: passwordSchema }),
        response: { 200: z.object({ user: userViewSchema }), 400: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { token, password } = request.body;
      await resetPerAddress(request, reply, request.ip);
      const problem = checkPassword(password);
      if (problem !== undefined) throw invalid(problem);
      const user = await usePasswordResetToken(database, token, await hashPassword(password));
      if (user === undefined)
        throw invalid(
          'This password reset link does not work (already used, expired or unknown): ask for a new one',
        );
      await recordPersonAudit(database, user.id, auditOrigin(request), { action: 'user.password_reset' });
      return { user: toUserView(user) };
    },
  );

  routes.post(
    '/mfa/verify',
    {
      schema: {
        summary: 'Finish a sign-in with two-factor sign-in on: the mfaToken and a TOTP or recovery code',
        description:
          'Answers as `POST /auth/login` does without MFA (the cookie and `{ user, csrfToken }`). A TOTP code is accepted once (within one step either side of the clock), a recovery code once ever. 401 for a wrong code or a used, expired or unknown mfaToken (a wrong code leaves the token usable).',
        body: z.strictObject({ mfaToken: z.string().min(1).max(128), code: z.string().min(1).max(32) }),
        response: { 200: signedInViewSchema, 401: errorBodySchema, 429: errorBodySchema },
      },
    },
    async (request, reply) => {
      const { mfaToken, code } = request.body;
      await mfaPerAddress(request, reply, request.ip);
      const expired = 'This sign-in has expired (or was finished already): sign in again with the password';
      const userId = await findMfaChallenge(database, mfaToken);
      if (userId === undefined) throw unauthorized(expired);
      await mfaPerAccount(request, reply, userId);
      if (!(await useSecondFactor(database, fastify.masterKey, userId, code)))
        throw unauthorized('The code is wrong (or used already)');
      if (!(await useMfaChallenge(database, mfaToken))) throw unauthorized(expired);
      const user = await findUserById(database, userId);
      if (user === undefined) throw unauthorized(expired);
      return signIn(database, publicUrl, request, reply, user, 'mfa');
    },
  );

  routes.post(
    '/magic-link',
    {
      schema: {
        summary: 'A one-time sign-in link by e-mail (`{ email }`), or sign in with its token (`{ token }`)',
        description:
          '`{ email }`: 202 whether or not the address has an account (an address without one gets an e-mail saying so); the link works once, within 15 minutes. `{ token }`: answers as `POST /auth/login` (the cookie and `{ user, csrfToken }`, or `{ mfaRequired, mfaToken }` with two-factor sign-in on); 400 for a used, expired or unknown token.',
        body: z.union([
          z.strictObject({ email: emailSchema }),
          z.strictObject({ token: z.string().min(1).max(128) }),
        ]),
        response: {
          200: z.union([signedInViewSchema, mfaRequiredSchema]),
          202: z.object({}),
          400: errorBodySchema,
          429: errorBodySchema,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if ('email' in body) {
        await magicPerAddress(request, reply, request.ip);
        await magicPerAccount(request, reply, body.email.toLowerCase());
        const user = await findUserByEmail(database, body.email);
        if (user === undefined)
          await mailer.send(
            noAccountMessage({
              to: body.email,
              signUpUrl: `${appUrl}/signup`,
              subject: 'Your sign-in link',
              asked: 'for a link to sign in to an account',
            }),
          );
        else {
          const token = await createMagicLinkToken(database, user);
          await mailer.send(magicLinkMessage({ to: user.email, link: magicLinkLink(appUrl, token) }));
        }
        return reply.code(202).send({});
      }
      await magicUsePerAddress(request, reply, request.ip);
      const user = await useMagicLinkToken(database, body.token);
      if (user === undefined)
        throw invalid(
          'This sign-in link does not work (already used, expired or unknown): ask for a new one',
        );
      await request.server.signInGate(user, 'magic_link', { checkOnly: true });
      if (await mfaEnabled(database, user.id))
        return { mfaRequired: true as const, mfaToken: await createMfaChallenge(database, user.id) };
      return signIn(database, publicUrl, request, reply, user, 'magic_link');
    },
  );
}
