import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { z } from 'zod';
import type { Passkey } from '../../platform/database/tables/passkeys.table.ts';

/**
 * Who the passkeys are for: the relying party id is the host name of the dashboard
 * (`SVC_APP_URL`), and a ceremony may come from the dashboard's origin or the server's own
 * (`SVC_PUBLIC_URL`) when they differ.
 */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

export function relyingPartyOf(configuration: { appUrl: string; publicUrl: string }): RelyingParty {
  const app = new URL(configuration.appUrl);
  return {
    id: app.hostname,
    name: app.hostname,
    origins: [...new Set([app.origin, new URL(configuration.publicUrl).origin])],
  };
}

const base64url = z
  .string()
  .max(16_384)
  .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');

/** `startRegistration()`'s answer (`@simplewebauthn/browser`), as the browser sends it. */
export const registrationResponseSchema = z.looseObject({
  id: base64url.min(1).max(1366),
  rawId: base64url.min(1).max(1366),
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: base64url,
    attestationObject: base64url,
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.looseObject({}),
});

/** `startAuthentication()`'s answer (`@simplewebauthn/browser`). */
export const authenticationResponseSchema = z.looseObject({
  id: base64url.min(1).max(1366),
  rawId: base64url.min(1).max(1366),
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: base64url,
    authenticatorData: base64url,
    signature: base64url,
    userHandle: base64url.optional(),
  }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.looseObject({}),
});

/** The shape @simplewebauthn/server expects (the schemas above check the fields it reads). */
export function asRegistrationResponse(value: z.infer<typeof registrationResponseSchema>) {
  return value as unknown as RegistrationResponseJSON;
}

export function asAuthenticationResponse(value: z.infer<typeof authenticationResponseSchema>) {
  return value as unknown as AuthenticationResponseJSON;
}

/** The challenge the browser signed (from clientDataJSON), or undefined when it is unreadable. */
export function challengeOf(clientDataJSON: string): string | undefined {
  try {
    const clientData: unknown = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON));
    if (typeof clientData !== 'object' || clientData === null) return undefined;
    const challenge = (clientData as { challenge?: unknown }).challenge;
    return typeof challenge === 'string' && challenge !== '' && challenge.length <= 1024
      ? challenge
      : undefined;
  } catch {
    return undefined;
  }
}

/** The user handle of a passkey: the person's user id, as bytes. */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(userId);
}

export function transportsOf(passkey: Passkey): AuthenticatorTransport[] {
  return passkey.transports as AuthenticatorTransport[];
}

/** A passkey as `/v1/me/passkeys` shows it: never its key. */
export const passkeyViewSchema = z.object({
  id: z.string().describe('`pk_…`'),
  name: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().optional().describe('Its last sign-in'),
  deviceType: z
    .enum(['singleDevice', 'multiDevice'])
    .describe('`multiDevice`: synced between devices (a password manager, a platform keychain)'),
  backedUp: z.boolean(),
  transports: z.array(z.string()),
});

export type PasskeyView = z.infer<typeof passkeyViewSchema>;

export function toPasskeyView(passkey: Passkey): PasskeyView {
  return {
    id: passkey.id,
    name: passkey.name,
    createdAt: passkey.created_at.toISOString(),
    ...(passkey.last_used_at === null ? {} : { lastUsedAt: passkey.last_used_at.toISOString() }),
    deviceType: passkey.device_type,
    backedUp: passkey.backed_up,
    transports: passkey.transports,
  };
}
