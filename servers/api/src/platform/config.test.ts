import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, describeConfiguration, loadConfiguration } from './config.ts';

const masterKey = Buffer.alloc(32, 7).toString('base64');

function problemsOf(environment: Record<string, string>): string[] {
  try {
    loadConfiguration(environment);
  } catch (error) {
    if (ConfigurationError.isInstance(error)) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigurationError');
}

describe('loadConfiguration', () => {
  it('defaults to the embedded store on 127.0.0.1:8080 in ./data', () => {
    const configuration = loadConfiguration({});
    expect(configuration).toEqual({
      host: '127.0.0.1',
      port: 8080,
      dataDirectory: resolve('data'),
      publicUrl: 'http://127.0.0.1:8080',
      database: { engine: 'pglite', directory: resolve('data', 'pglite') },
      blobStore: { kind: 'file', directory: resolve('data', 'blobs') },
      logLevel: 'info',
      callWorker: true,
      callCoalesceMs: 500,
      deliveryWorker: true,
      regressionWorker: true,
      retentionWorker: true,
      usageWorker: true,
      appUrl: 'http://127.0.0.1:8080',
      webhookAllowedHosts: expect.objectContaining({ text: '' }),
    });
    expect(configuration.webhookAllowedHosts.hosts.size).toBe(0);
  });

  it('reads the webhook allow-list and the app URL, and names every bad entry', () => {
    const configuration = loadConfiguration({
      SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1, hooks.internal, 10.0.0.0/8',
      SVC_APP_URL: 'https://app.example.com/',
    });
    expect(configuration.appUrl).toBe('https://app.example.com');
    expect(configuration.webhookAllowedHosts.hosts.has('hooks.internal')).toBe(true);
    expect(configuration.webhookAllowedHosts.networks.check('10.1.2.3', 'ipv4')).toBe(true);
    expect(() => loadConfiguration({ SVC_WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/33' })).toThrow(
      /SVC_WEBHOOK_ALLOWED_HOSTS: .*10\.0\.0\.0\/33/,
    );
  });

  it('reads the DNS servers of domain verification, and names every bad entry', () => {
    expect(loadConfiguration({}).dnsServers).toBeUndefined();
    expect(
      loadConfiguration({ SVC_DNS_SERVERS: '10.0.0.2, 127.0.0.1:53535, [::1]:53, ::1' }).dnsServers,
    ).toEqual(['10.0.0.2', '127.0.0.1:53535', '[::1]:53', '::1']);
    expect(() => loadConfiguration({ SVC_DNS_SERVERS: 'dns.example, 127.0.0.1:70000' })).toThrow(
      /SVC_DNS_SERVERS: dns\.example is not an IP address[\s\S]*SVC_DNS_SERVERS: 127\.0\.0\.1:70000/,
    );
  });

  it('switches to PostgreSQL with DATABASE_URL and to S3 with S3_BUCKET', () => {
    const configuration = loadConfiguration({
      DATABASE_URL: 'postgres://svc:secret@127.0.0.1:5432/svc',
      DATABASE_POOL_SIZE: '20',
      S3_BUCKET: 'replays',
      S3_ENDPOINT: 'http://127.0.0.1:4569',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      SVC_MASTER_KEY: masterKey,
      SVC_PUBLIC_URL: 'https://replay.example.com/',
      PORT: '0',
    });
    expect(configuration.database).toEqual({
      engine: 'postgres',
      url: 'postgres://svc:secret@127.0.0.1:5432/svc',
      poolSize: 20,
    });
    expect(configuration.blobStore).toEqual({
      kind: 's3',
      bucket: 'replays',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:4569',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });
    expect(configuration.masterKey).toBe(masterKey);
    expect(configuration.publicUrl).toBe('https://replay.example.com');
    expect(configuration.port).toBe(0);
  });

  it('turns the background call worker off with SVC_CALL_WORKER=false, and refuses other words', () => {
    expect(loadConfiguration({ SVC_CALL_WORKER: 'false' }).callWorker).toBe(false);
    expect(loadConfiguration({ SVC_CALL_WORKER: '1' }).callWorker).toBe(true);
    expect(() => loadConfiguration({ SVC_CALL_WORKER: 'off' })).toThrow(/SVC_CALL_WORKER/);
  });

  it('reads the coalescing window of call jobs in ms, 0 to turn it off', () => {
    expect(loadConfiguration({ SVC_CALL_COALESCE_MS: '0' }).callCoalesceMs).toBe(0);
    expect(loadConfiguration({ SVC_CALL_COALESCE_MS: '2500' }).callCoalesceMs).toBe(2500);
    expect(() => loadConfiguration({ SVC_CALL_COALESCE_MS: '1.5' })).toThrow(/SVC_CALL_COALESCE_MS/);
    expect(() => loadConfiguration({ SVC_CALL_COALESCE_MS: '-1' })).toThrow(/SVC_CALL_COALESCE_MS/);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfiguration({ DATABASE_URL: '', S3_BUCKET: ' ', PORT: '' }).database.engine).toBe('pglite');
  });

  it('reports every bad setting at once, each naming its variable and the fix', () => {
    const problems = problemsOf({
      PORT: '80a',
      HOST: '0.0.0.0',
      DATABASE_URL: 'mysql://x',
      SVC_MASTER_KEY: 'c2hvcnQ=',
      SVC_PUBLIC_URL: 'replay.example.com',
      SVC_LOG_LEVEL: 'loud',
    });
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/^PORT: /m);
    expect(problems.join('\n')).toMatch(/^DATABASE_URL: must be a postgres:\/\//m);
    expect(problems.join('\n')).toMatch(/^SVC_MASTER_KEY: .*openssl rand -base64 32/m);
    expect(problems.join('\n')).toMatch(/^SVC_PUBLIC_URL: must be an absolute http\(s\) URL/m);
    expect(problems.join('\n')).toMatch(/^SVC_LOG_LEVEL: /m);
  });

  it('refuses half an S3 configuration', () => {
    expect(problemsOf({ S3_ENDPOINT: 'http://127.0.0.1:4569' })).toEqual([
      'S3_BUCKET: required when any S3_* setting is given (it switches blobs to S3 storage)',
    ]);
    expect(problemsOf({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' })).toEqual([
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: give both or neither',
    ]);
  });

  it('rejects ports out of range and a master key of the wrong length, without echoing the key', () => {
    expect(problemsOf({ PORT: '65536' })[0]).toMatch(/^PORT: must be 0..65535/);
    const wrongKey = Buffer.alloc(31, 1).toString('base64');
    const [problem] = problemsOf({ SVC_MASTER_KEY: wrongKey });
    expect(problem).toMatch(/^SVC_MASTER_KEY: /);
    expect(problem).not.toContain(wrongKey);
  });
});

describe('describeConfiguration', () => {
  it('redacts the database password, the S3 secret and the master key', () => {
    const described = JSON.stringify(
      describeConfiguration(
        loadConfiguration({
          DATABASE_URL: 'postgres://svc:hunter2@127.0.0.1:5432/svc',
          S3_BUCKET: 'b',
          S3_ACCESS_KEY_ID: 'id',
          S3_SECRET_ACCESS_KEY: 'very-secret',
          SVC_MASTER_KEY: masterKey,
        }),
      ),
    );
    expect(described).not.toContain('hunter2');
    expect(described).not.toContain('very-secret');
    expect(described).not.toContain(masterKey);
    expect(described).toContain('postgres://svc:redacted@127.0.0.1:5432/svc');
  });
});

describe('mail settings', () => {
  it('reads SVC_SMTP_URL and SVC_MAIL_FROM, and leaves both out when unset', () => {
    const configuration = loadConfiguration({
      SVC_SMTP_URL: 'smtp://mailer:s3cret@smtp.example.com:587',
      SVC_MAIL_FROM: 'Replays <no-reply@example.com>',
    });
    expect(configuration.smtpUrl).toBe('smtp://mailer:s3cret@smtp.example.com:587');
    expect(configuration.mailFrom).toBe('Replays <no-reply@example.com>');
    expect(loadConfiguration({ SVC_SMTP_URL: 'smtps://smtp.example.com' }).smtpUrl).toBe(
      'smtps://smtp.example.com',
    );
    expect(loadConfiguration({ SVC_MAIL_FROM: 'no-reply@example.com' }).mailFrom).toBe(
      'no-reply@example.com',
    );
    const defaults = loadConfiguration({});
    expect('smtpUrl' in defaults).toBe(false);
    expect('mailFrom' in defaults).toBe(false);
  });

  it('names each bad mail setting', () => {
    expect(problemsOf({ SVC_SMTP_URL: 'http://smtp.example.com', SVC_MAIL_FROM: 'nobody' })).toEqual([
      'SVC_SMTP_URL: must be an smtp:// or smtps:// URL, e.g. smtp://user:password@smtp.example.com:587',
      'SVC_MAIL_FROM: must be an e-mail address or "Name <address>", e.g. Replays <no-reply@example.com>',
    ]);
    expect(
      problemsOf({ SVC_MAIL_FROM: 'Replays <no-reply@example.com>\r\nBcc: x@example.com' }),
    ).toHaveLength(1);
    expect(problemsOf({ SVC_SMTP_URL: 'smtp://' })).toHaveLength(1);
  });

  it('redacts the SMTP password when describing the configuration', () => {
    const described = JSON.stringify(
      describeConfiguration(loadConfiguration({ SVC_SMTP_URL: 'smtp://mailer:s3cret@smtp.example.com:587' })),
    );
    expect(described).not.toContain('s3cret');
    expect(described).toContain('smtp://mailer:redacted@smtp.example.com:587');
  });
});
