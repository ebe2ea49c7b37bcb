import { readFileSync } from 'node:fs';
import { type Algorithm, hash, parseOptions, verify } from '@node-rs/argon2';

/**
 * argon2id with OWASP's first recommended configuration (Password Storage Cheat Sheet): 19 MiB
 * of memory, 2 passes, 1 lane. ~30 ms a hash on the 2-core test machine; memory-hard, so a GPU
 * guessing offline pays the 19 MiB for every guess. Hashes carry their parameters (PHC string),
 * so raising these re-hashes each password at its next sign-in ({@link needsRehash}).
 */
export const PASSWORD_HASHING = {
  algorithm: 2 as Algorithm, // Algorithm.Argon2id (a const enum, which type stripping cannot read)
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** NIST SP 800-63B §3.1.1.2: at least 8 characters; longer ones are allowed up to a bound of ours. */
const PASSWORD_MIN_LENGTH = 8;
/** Bounds the hashing work one request can ask for; far above any passphrase. */
const PASSWORD_MAX_LENGTH = 256;

/**
 * The 1000 most common passwords (the top of SecLists' `10k-most-common.txt`, MIT licence),
 * lowercased: a password that is one of them, whatever its case, is refused (NIST SP 800-63B
 * asks for a check against known-breached and commonly used values).
 */
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.trim().toLowerCase())
    .filter((line) => line !== ''),
);

/**
 * Why a new password is refused, or undefined when it is acceptable: too short (in characters,
 * not bytes), too long, or one of the most common passwords. No composition rules (NIST advises
 * against them).
 *
 * @example
 * ```ts
 * checkPassword('letmein1'); // 'This password is one of the most common ones: choose another'
 * ```
 */
export function checkPassword(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    return `The password must have at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must have at most ${PASSWORD_MAX_LENGTH} characters`;
  if (COMMON_PASSWORDS.has(password.toLowerCase()))
    return 'This password is one of the most common ones: choose another';
  return undefined;
}

/** The password's argon2id hash (PHC string) with the current parameters. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASHING);
}

/** Made once, when the module loads, so that even the first unknown address costs one verify. */
const dummyHash = hashPassword(crypto.randomUUID());

/**
 * Whether `password` matches `passwordHash`. With no hash (no such user), the password is checked
 * against a hash of a random value made with the same parameters, so an unknown e-mail address
 * costs the same time as a wrong password and the answer's timing tells nothing.
 */
export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (passwordHash === undefined) {
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}

/** Whether a stored hash was made with other parameters than today's (re-hash it at sign-in). */
export function needsRehash(passwordHash: string): boolean {
  try {
    const options = parseOptions(passwordHash);
    return (
      options.algorithm !== PASSWORD_HASHING.algorithm ||
      options.memoryCost !== PASSWORD_HASHING.memoryCost ||
      options.timeCost !== PASSWORD_HASHING.timeCost ||
      options.parallelism !== PASSWORD_HASHING.parallelism
    );
  } catch {
    return true;
  }
}
