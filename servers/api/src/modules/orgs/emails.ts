import { composeMessage } from '../../platform/mail/index.ts';

/**
 * The dashboard's page for an invitation link: `<appUrl>/accept-invitation?token=…` (the page
 * posts the token to `POST /auth/invitations/{token}/accept`).
 */
export function invitationLink(appUrl: string, token: string): string {
  return `${appUrl}/accept-invitation?token=${encodeURIComponent(token)}`;
}

/** "You are invited to <organization>", with the one-time link. */
export function invitationMessage(options: {
  to: string;
  organizationName: string;
  invitedBy: string;
  role: string;
  link: string;
  expiresInDays: number;
}) {
  return {
    to: options.to,
    link: options.link,
    ...composeMessage({
      subject: `You are invited to ${options.organizationName}`,
      paragraphs: [
        'Hello,',
        `${options.invitedBy} invites you to join ${options.organizationName} as ${options.role === 'admin' ? 'an admin' : `a ${options.role}`}.`,
        `Follow this link to accept: you can create an account there, or sign in to yours with this address. It works once, within ${options.expiresInDays} days.`,
      ],
      action: { label: `Join ${options.organizationName}`, url: options.link },
      footer: 'If you did not expect this invitation, ignore this message: nothing happens without the link.',
    }),
  };
}
