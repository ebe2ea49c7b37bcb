import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createEvent, createSecret, deliver } from './test-deliveries.ts';

const main = fileURLToPath(new URL('main.ts', import.meta.url));

/** Resolves with the first line of `stream` that matches, rejecting after a timeout. */
function nextLine(stream: NodeJS.ReadableStream, pattern: RegExp, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      stream.off('data', onData);
      reject(new Error(`No line matching ${pattern} within 5 s. Output so far:\n${output()}`));
    }, 5000);
    function onData(chunk: Buffer) {
      buffered += chunk.toString('utf8');
      const line = buffered.split('\n').find((candidate) => pattern.test(candidate));
      if (line === undefined) return;
      clearTimeout(timer);
      stream.off('data', onData);
      resolve(line);
    }
    stream.on('data', onData);
  });
}

describe('the command line receiver', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it.each(['node', 'fetch'])(
    'WEBHOOK_RECEIVER=%s prints its URL, one JSON line per verified event, rejections, and stops on SIGTERM',
    async (variant) => {
      const secret = createSecret();
      const child = spawn(process.execPath, ['--conditions=@svc/source', main], {
        env: { ...process.env, WEBHOOK_SECRET: secret, PORT: '0', WEBHOOK_RECEIVER: variant },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
      });
      const { stdout, stderr } = child;
      if (stdout === null || stderr === null) throw new Error('no pipes');

      const started = await nextLine(stderr, /^Receiving webhooks at /, () => output);
      const url = started.match(/at (http:\/\/127\.0\.0\.1:\d+\/webhooks) /)?.[1];
      expect(url).toBeDefined();

      const event = createEvent();
      const printed = nextLine(stdout, /^\{/, () => output);
      const { response } = await deliver(url ?? '', {
        body: JSON.stringify(event),
        secrets: secret,
        attempt: 2,
      });
      expect(response.status).toBe(200);
      expect(JSON.parse(await printed)).toEqual({
        id: event.id,
        type: 'cluster.created',
        title: event.data.title,
        severity: event.data.severity,
        attempt: 2,
        duplicate: false,
      });

      const rejection = nextLine(stderr, /^rejected/, () => output);
      expect((await deliver(url ?? '', { secrets: createSecret() })).response.status).toBe(400);
      expect(await rejection).toMatch(/^rejected \(no_matching_signature\): /);

      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      expect(await exited).toEqual([0, null]);
      expect(output).toContain('SIGTERM: stopping after 1 verified delivery.');
    },
  );

  it('refuses to start without WEBHOOK_SECRET', async () => {
    const child = spawn(process.execPath, ['--conditions=@svc/source', main], {
      env: { ...process.env, WEBHOOK_SECRET: '', PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    expect(await once(child, 'exit')).toEqual([1, null]);
    expect(stderr).toContain('Set WEBHOOK_SECRET');
  });
});
