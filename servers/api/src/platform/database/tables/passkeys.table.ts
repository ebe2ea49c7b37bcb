import type { ColumnType, JSONColumnType, Selectable } from 'kysely';

/** A person's WebAuthn credential (migration 2026-12-24-passkeys). */
export interface PasskeysTable {
  /** `pk_<ULID>`. */
  id: string;
  user_id: string;
  /** The credential id, base64url, as the authenticator made it. */
  credential_id: string;
  /** The COSE public key. */
  public_key: Uint8Array;
  /** The signature counter last seen (0 for authenticators that keep none); bigint: may be a string. */
  counter: ColumnType<string | number, number | undefined, number>;
  /** The transports the browser reported (`internal`, `hybrid`, `usb`, ...). */
  transports: JSONColumnType<string[], string | undefined, string>;
  /** `multiDevice` when the credential is synced (iCloud Keychain, Google Password Manager). */
  device_type: 'singleDevice' | 'multiDevice';
  backed_up: ColumnType<boolean, boolean | undefined, boolean>;
  /** A name the person chose (or a default one). */
  name: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export type Passkey = Selectable<PasskeysTable>;

/** A challenge of a registration or a passkey sign-in: 5 minutes, used once (deleted). */
export interface PasskeyChallengesTable {
  /** SHA-256 of the challenge (base64url text). */
  challenge_hash: Uint8Array;
  kind: 'registration' | 'authentication';
  /** Registration: whose passkey it will be; null for sign-in. */
  user_id: string | null;
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}
