import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on 127.0.0.1 in the test process, keeping every message it receives. */
export interface TestSmtpServer {
  /** `smtp://127.0.0.1:PORT`, for `SVC_SMTP_URL`. */
  url: string;
  /** Every message received so far, parsed, with its envelope recipients. */
  messages: Array<{ recipients: string[]; mail: ParsedMail }>;
  /** The next message to `recipient` not taken yet (waits up to `timeoutMs`, default 10 s). */
  nextMessage(recipient: string, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * Starts an SMTP server (`smtp-server`, no authentication, no STARTTLS) that parses each message
 * with `mailparser`.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: TestSmtpServer['messages'] = [];
  const taken = new Set<number>();
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          messages.push({ recipients: session.envelope.rcptTo.map((to) => to.address.toLowerCase()), mail });
          for (const wake of waiters) wake();
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  function take(recipient: string): ParsedMail | undefined {
    const index = messages.findIndex(
      (message, position) => !taken.has(position) && message.recipients.includes(recipient.toLowerCase()),
    );
    if (index === -1) return undefined;
    taken.add(index);
    return messages[index]?.mail;
  }

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    nextMessage(recipient, timeoutMs = 10_000) {
      const found = take(recipient);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const wake = () => {
          const mail = take(recipient);
          if (mail === undefined) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(mail);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`No e-mail to ${recipient} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(wake);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
