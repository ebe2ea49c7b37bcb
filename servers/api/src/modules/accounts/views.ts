import { z } from 'zod';
import type { User } from '../../platform/database/tables/accounts.table.ts';

export const userViewSchema = z.object({
  id: z.string(),
  email: z.string(),
  /** Omitted when the person gave none. */
  name: z.string().optional(),
  /** When the address was verified (its link followed); omitted until then. */
  emailVerifiedAt: z.iso.datetime().optional(),
  createdAt: z.iso.datetime(),
});

export type UserView = z.infer<typeof userViewSchema>;

export function toUserView(user: User): UserView {
  return {
    id: user.id,
    email: user.email,
    ...(user.name === null ? {} : { name: user.name }),
    ...(user.email_verified_at === null ? {} : { emailVerifiedAt: user.email_verified_at.toISOString() }),
    createdAt: user.created_at.toISOString(),
  };
}

/** `{ user, csrfToken }`: the signed-in person and the token for `X-Service-CSRF`. */
export const signedInViewSchema = z.object({ user: userViewSchema, csrfToken: z.string() });
