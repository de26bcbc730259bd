import fs from 'node:fs';
import type net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BytesInFlight } from '../../src/bytes-in-flight.js';
import { AppError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { startSubmissionServer } from '../../src/inbound/submission-server.js';
import { eventually } from '../helpers/http.js';
import { SmtpConversation } from '../helpers/smtp-conversation.js';

/**
 * SMTP submission counts each message's DATA bytes in the process's bytes in flight, with REST and gRPC, from
 * its first byte until it is answered: at MAIL FROM a transaction is refused 452 4.3.1 when its declared SIZE (or,
 * without one, a byte) does not fit; during DATA the message is dropped at the chunk that overflows and answered
 * 452 4.3.1 after its end; within the caps it is submitted as before, and a dropped connection gives its bytes back.
 */

const MiB = 1024 * 1024;
const fixtures = path.resolve(import.meta.dirname, '../fixtures/tls');
const tls = {
  cert: fs.readFileSync(path.join(fixtures, 'mx-cert.pem'), 'utf8'),
  key: fs.readFileSync(path.join(fixtures, 'mx-key.pem'), 'utf8'),
};

/** A message of about `size` bytes: headers, then lines of x. */
function message(size: number): string {
  const line = `${'x'.repeat(76)}\r\n`;
  return `From: a@example.com\r\nTo: b@example.net\r\nSubject: s\r\n\r\n${line.repeat(Math.ceil(size / line.length))}`;
}

async function start(limits: { process: number; perKey: number }) {
  const bytes = new BytesInFlight(limits);
  const submitted: { key: string; size: number }[] = [];
  let hold: Promise<void> | undefined;
  const server = await startSubmissionServer({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mailer.test',
    tls,
    logger: createLogger('silent', 'test'),
    bytesInFlight: bytes,
    limits: { perAddress: 20, setupMs: 30_000 },
    handler: {
      login: async (password: string) => {
        if (!password.startsWith('mk_')) throw new AppError('unauthorized', 'Invalid API key');
        return { key: password };
      },
      beginMessage: async () => {},
      submit: async (credential: { key: string }, raw: Buffer) => {
        submitted.push({ key: credential.key, size: raw.length });
        await hold;
        return 'em_test';
      },
      bytesKey: (credential: { key: string }) => credential.key,
    },
  });
  onTestFinished(() => server.close());
  let release = () => {};
  return {
    bytes,
    submitted,
    port: server.port,
    holdSubmissions: () => {
      hold = new Promise<void>((resolve) => (release = resolve));
    },
    releaseSubmissions: () => release(),
  };
}

/** A client logged in with `key` after STARTTLS. */
async function session(port: number, key: string): Promise<SmtpConversation> {
  const c = await SmtpConversation.open('127.0.0.1', port);
  onTestFinished(() => c.close());
  expect((await c.read()).code).toBe(220);
  expect((await c.command('EHLO client.test')).code).toBe(250);
  expect((await c.command('STARTTLS')).code).toBe(220);
  await c.startTls();
  expect((await c.command('EHLO client.test')).code).toBe(250);
  expect((await c.command(`AUTH PLAIN ${Buffer.from(`\0user\0${key}`).toString('base64')}`)).code).toBe(235);
  return c;
}

/** MAIL FROM (with its SIZE, if any), RCPT TO and DATA up to the 354. */
async function begin(c: SmtpConversation, size?: number): Promise<void> {
  expect((await c.command(`MAIL FROM:<a@example.com>${size ? ` SIZE=${size}` : ''}`)).code).toBe(250);
  expect((await c.command('RCPT TO:<b@example.net>')).code).toBe(250);
  expect((await c.command('DATA')).code).toBe(354);
}

describe('SMTP submission: message bytes in flight', () => {
  it("452 4.3.1 at MAIL FROM and after DATA over the key's cap, then the process's; 250 once the bytes are back", async () => {
    const server = await start({ process: 6 * MiB, perKey: 4 * MiB });
    server.holdSubmissions();
    // One message of key a held in its submission: 3 MiB in flight.
    const first = await session(server.port, 'mk_a');
    await begin(first);
    const firstAnswer = first.data(message(3 * MiB));
    await eventually(async () => (server.submitted.length === 1 ? true : undefined));
    const held = server.bytes.held('mk_a');
    expect(held).toBeGreaterThan(3 * MiB);

    const second = await session(server.port, 'mk_a');
    const sized = await second.command(`MAIL FROM:<a@example.com> SIZE=${2 * MiB}`);
    expect(sized.code).toBe(452);
    expect(sized.lines[0]).toBe(
      '4.3.1 This API key already has 4 MiB of request bodies in flight (the most it may); retry once earlier requests are answered (retry in 1 s)',
    );
    // Without SIZE the transaction starts (there is room for a byte), and the message is refused as it overflows.
    await begin(second);
    const overKey = await second.data(message(2 * MiB));
    expect(overKey.code).toBe(452);
    expect(overKey.lines[0]).toMatch(/^4\.3\.1 This API key already has 4 MiB/);
    expect(server.bytes.held()).toBe(held);

    // Another key fits its own cap but not the process's.
    const third = await session(server.port, 'mk_b');
    expect((await third.command(`MAIL FROM:<a@example.com> SIZE=${3 * MiB}`)).lines[0]).toMatch(
      /^4\.3\.1 The server already holds 6 MiB of request bodies in flight/,
    );
    await begin(third);
    const overProcess = await third.data(message(3 * MiB));
    expect(overProcess.code).toBe(452);
    expect(overProcess.lines[0]).toMatch(/^4\.3\.1 The server already holds 6 MiB/);
    expect(server.submitted).toHaveLength(1);

    server.releaseSubmissions();
    expect((await firstAnswer).code).toBe(250);
    await eventually(async () => (server.bytes.held() === 0 ? true : undefined));

    // The same sessions go on: within the caps their messages are submitted.
    await begin(second, 2 * MiB);
    expect((await second.data(message(2 * MiB))).code).toBe(250);
    await begin(third);
    expect((await third.data(message(3 * MiB))).code).toBe(250);
    expect(server.submitted.map((s) => s.key)).toEqual(['mk_a', 'mk_a', 'mk_b']);
    expect(server.bytes.held()).toBe(0);
  }, 60_000);

  it('a connection dropped in the middle of DATA gives its bytes back', async () => {
    const server = await start({ process: 64 * MiB, perKey: 64 * MiB });
    const c = await session(server.port, 'mk_a');
    await begin(c);
    const socket = (c as unknown as { socket: net.Socket }).socket;
    socket.write(message(2 * MiB).slice(0, 2 * MiB - 100));
    await eventually(async () => (server.bytes.held('mk_a') >= MiB ? true : undefined));
    c.close();
    await eventually(async () => (server.bytes.held() === 0 ? true : undefined));
    expect(server.submitted).toEqual([]);
  });
});
