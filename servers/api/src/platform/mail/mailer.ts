import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';

/** One e-mail: plain text and HTML bodies of the same content. */
interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The link the message is about (a one-time link): logged when the message goes to a file. */
  link?: string;
}

/** Where a message went: the SMTP server's message id, or the `.eml` file it was written to. */
type MailReceipt = { via: 'smtp'; messageId: string } | { via: 'file'; file: string };

/** Sends the server's e-mail (see {@link createMailer}). */
export interface Mailer {
  send(message: MailMessage): Promise<MailReceipt>;
  /** Closes the SMTP connections. */
  close(): void;
}

/** The log the mailer writes to (a pino logger fits). */
interface MailLog {
  info(fields: Record<string, unknown>, message: string): void;
}

export interface MailerOptions {
  /** `smtp://…` or `smtps://…`; absent: messages are written to `<dataDirectory>/mail/`. */
  smtpUrl?: string;
  /** `SVC_MAIL_FROM`; absent: `svc <no-reply@HOST>` with the host of `appUrl`. */
  from?: string;
  appUrl: string;
  dataDirectory: string;
  log: MailLog;
}

/**
 * The sender when `SVC_MAIL_FROM` is not set: `no-reply@` the app's host (`localhost` for an
 * address, which is no mail domain).
 */
function defaultFrom(appUrl: string): string {
  const host = new URL(appUrl).hostname;
  const domain = /^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[') ? 'localhost' : host;
  return `svc <no-reply@${domain}>`;
}

/**
 * The server's mailer: over SMTP (nodemailer) when `smtpUrl` is set; otherwise each message is
 * written as an `.eml` file (RFC 5322, as SMTP would have carried it; mode 0600, since it holds a
 * one-time link) under `<dataDirectory>/mail/`, and the file and link are logged, so an operator
 * without a mail server can still sign people in.
 *
 * @example
 * ```ts
 * const mailer = createMailer({ appUrl, dataDirectory, log });
 * await mailer.send({ to: 'ada@example.com', subject: 'Hi', text: 'Hi', html: '<p>Hi</p>' });
 * ```
 */
export function createMailer(options: MailerOptions): Mailer {
  const from = options.from ?? defaultFrom(options.appUrl);
  if (options.smtpUrl !== undefined) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      async send(message) {
        const info = await transport.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
        });
        return { via: 'smtp', messageId: info.messageId };
      },
      close() {
        transport.close();
      },
    };
  }
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const directory = join(options.dataDirectory, 'mail');
  return {
    async send(message) {
      const info = await composer.sendMail({
        from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
      await mkdir(directory, { recursive: true, mode: 0o700 });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
      const file = join(directory, name);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      options.log.info(
        {
          to: message.to,
          subject: message.subject,
          file,
          ...(message.link === undefined ? {} : { link: message.link }),
        },
        `no SMTP server set (SVC_SMTP_URL): e-mail written to ${file}`,
      );
      return { via: 'file', file };
    },
    close() {},
  };
}
