import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { standardSignatureFor } from '../../src/webhooks/standard-signature.js';
import { call, eventually } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import type { Stack } from '../helpers/stack.js';

/**
 * A client's webhook receiver (sdk/go/webhook, sdk/python/example_webhook.py) as a process of its own: it prints
 * `listening <address>` once ready, then `verified <event> <email id>` or `refused <reason>` per request.
 */
export interface ReceiverProcess {
  lines: string[];
  stop(): void;
}

/** Starts a receiver program and waits for its `listening` line; it is killed by stop() (or if it never gets ready). */
export async function startReceiver(
  bin: string,
  args: string[],
  env: Record<string, string>,
): Promise<ReceiverProcess> {
  const child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    const parts = stdout.split('\n');
    stdout = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${stderr}`);
      return lines.some((l) => l.startsWith('listening '));
    }, 60_000);
  } catch (err) {
    stop();
    throw new Error(`${bin} did not start listening: ${String(err)}\n${stderr}`, { cause: err });
  }
  return { lines, stop };
}

/**
 * The service's real delivery verified by the client's receiver, and requests the service never signed refused by the
 * same code: a webhook on the account (self-service POST /webhooks, to the receiver's loopback URL: the stack allows
 * private webhook URLs), an email sent, the receiver's `verified send <email id>`; then, sent straight to the
 * receiver, a request signed here with the webhook's secret (answered 204, so the refusals are about what is wrong
 * with each) and a tampered body, another secret, a timestamp 10 minutes old and no signature (each answered 400).
 */
export async function expectReceiverVerifies(
  stack: Stack,
  start: (port: number, secret: string) => Promise<ReceiverProcess>,
): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/hooks`;
  const created = await call<{ secret: string }>('POST', `${stack.api}/webhooks`, {
    token: stack.apiKey,
    body: { url, events: ['send'] },
  });
  expect(created.status, created.text).toBe(200);
  const secret = created.body.secret;
  const receiver = await start(port, secret);
  try {
    const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: { from: 'hello@example.com', to: ['you@example.net'], subject: 'Webhook', text: 'Signed.' },
    });
    expect(sent.status, sent.text).toBe(200);
    await eventually(async () => receiver.lines.includes(`verified send ${sent.body.id}`), 60_000).catch(
      (err: unknown) => {
        throw new Error(`no verified delivery of ${sent.body.id}:\n${receiver.lines.join('\n')}`, { cause: err });
      },
    );
    expect(receiver.lines.filter((l) => l.startsWith('refused'))).toEqual([]);

    const forged = 'em_forged';
    const body = JSON.stringify({
      id: 'ev_forged',
      event: 'send',
      timestamp: new Date().toISOString(),
      email: { id: forged },
      data: {},
    });
    const post = async (rawBody: string, headers: Record<string, string>) =>
      (await call('POST', url, { rawBody, headers })).status;
    const signed = (key: string, ts: number, signedBody = body) => ({
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(ts),
      'webhook-signature': standardSignatureFor(key, 'msg_forged', ts, signedBody),
    });
    const now = Math.floor(Date.now() / 1000);
    const otherSecret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
    expect(await post(body, signed(secret, now)), 'signed with the webhook secret').toBe(204);
    expect(await post(body.replace('"send"', '"delivery"'), signed(secret, now)), 'tampered body').toBe(400);
    expect(await post(body, signed(otherSecret, now)), 'another secret').toBe(400);
    expect(await post(body, signed(secret, now - 600)), 'timestamp 10 minutes old').toBe(400);
    expect(await post(body, {}), 'no signature').toBe(400);
    expect(receiver.lines.filter((l) => l.endsWith(` ${forged}`))).toEqual([`verified send ${forged}`]);
    expect(receiver.lines.filter((l) => l.startsWith('refused'))).toHaveLength(4);
  } finally {
    receiver.stop();
  }
}
