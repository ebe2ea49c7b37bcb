import { composeMessage } from '../../platform/mail/index.ts';

// The e-mails of sign-up. Links point at the dashboard (`SVC_APP_URL`), which posts the token to
// the API (`POST /auth/verify-email`).

interface Outgoing {
  to: string;
  subject: string;
  text: string;
  html: string;
  link: string;
}

/** The dashboard's page for a verification link: `<appUrl>/verify-email?token=…`. */
export function verificationLink(appUrl: string, token: string): string {
  return `${appUrl}/verify-email?token=${encodeURIComponent(token)}`;
}

/** "Verify your e-mail address", with the one-time link, to a new account's address. */
export function verificationMessage(options: { to: string; name?: string; link: string }): Outgoing {
  const greeting = options.name === undefined ? 'Hello,' : `Hello ${options.name},`;
  return {
    to: options.to,
    link: options.link,
    ...composeMessage({
      subject: 'Verify your e-mail address',
      paragraphs: [
        greeting,
        'Follow this link to verify your e-mail address and finish signing up. It works once, within 24 hours.',
      ],
      action: { label: 'Verify my e-mail address', url: options.link },
      footer: 'If you did not sign up, ignore this message: nothing happens without the link.',
    }),
  };
}

/**
 * To an address that already has an account, when someone signs up with it again: the answer
 * to the sign-up is the same as for a new address, so the owner learns it here. An address not
 * verified yet gets a new verification link.
 */
export function existingAccountMessage(options: {
  to: string;
  signInUrl: string;
  verificationLink?: string;
}): Outgoing {
  const link = options.verificationLink ?? options.signInUrl;
  return {
    to: options.to,
    link,
    ...composeMessage({
      subject: 'You already have an account',
      paragraphs: [
        'Someone, probably you, tried to sign up with this e-mail address, which already has an account. No new account was made and your password did not change.',
        options.verificationLink === undefined
          ? 'Sign in with your password instead.'
          : 'Your address is not verified yet: follow this link to verify it (it works once, within 24 hours), then sign in.',
      ],
      action:
        options.verificationLink === undefined
          ? { label: 'Sign in', url: options.signInUrl }
          : { label: 'Verify my e-mail address', url: link },
      footer: 'If it was not you, you can ignore this message.',
    }),
  };
}

/** The dashboard's page for a password reset link: `<appUrl>/reset-password?token=…`. */
export function passwordResetLink(appUrl: string, token: string): string {
  return `${appUrl}/reset-password?token=${encodeURIComponent(token)}`;
}

/** "Reset your password", with the one-time link (`POST /auth/password/forgot`). */
export function passwordResetMessage(options: { to: string; link: string }): Outgoing {
  return {
    to: options.to,
    link: options.link,
    ...composeMessage({
      subject: 'Reset your password',
      paragraphs: [
        'Someone, probably you, asked to reset the password of the account of this e-mail address.',
        'Follow this link to choose a new password. It works once, within 1 hour; every signed-in session of the account then ends.',
      ],
      action: { label: 'Choose a new password', url: options.link },
      footer: 'If you did not ask, ignore this message: your password does not change without the link.',
    }),
  };
}

/** The dashboard's page for a magic (sign-in) link: `<appUrl>/magic-link?token=…`. */
export function magicLinkLink(appUrl: string, token: string): string {
  return `${appUrl}/magic-link?token=${encodeURIComponent(token)}`;
}

/** "Sign in", with a one-time sign-in link (`POST /auth/magic-link`). */
export function magicLinkMessage(options: { to: string; link: string }): Outgoing {
  return {
    to: options.to,
    link: options.link,
    ...composeMessage({
      subject: 'Your sign-in link',
      paragraphs: [
        'Someone, probably you, asked for a link to sign in to the account of this e-mail address.',
        'Follow this link to sign in. It works once, within 15 minutes.',
      ],
      action: { label: 'Sign in', url: options.link },
      footer: 'If you did not ask, ignore this message: nobody signs in without the link.',
    }),
  };
}

/**
 * To an address with no account, when someone asks to reset its password or for a sign-in link:
 * the answer is the same as for an account, so the person learns it here (and the request takes
 * the same time).
 */
export function noAccountMessage(options: {
  to: string;
  signUpUrl: string;
  subject: string;
  asked: string;
}): Outgoing {
  return {
    to: options.to,
    link: options.signUpUrl,
    ...composeMessage({
      subject: options.subject,
      paragraphs: [
        `Someone, probably you, asked ${options.asked} of this e-mail address, but it has no account.`,
        'Perhaps you signed up with another address. You can also sign up with this one.',
      ],
      action: { label: 'Sign up', url: options.signUpUrl },
      footer: 'If you did not ask, ignore this message.',
    }),
  };
}
