import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { callCredential, type CallContext } from '../../src/api/call-context.js';
import { BytesInFlight, type BytesInFlightLimits } from '../../src/bytes-in-flight.js';
import { AppError } from '../../src/errors.js';
import type { Principal } from '../../src/services/auth-service.js';
import { eventually } from '../helpers/http.js';
import { buildTestRestApp } from '../helpers/in-memory-apps.js';

/**
 * The REST gateway counts request bodies in flight per process and per key (bytes-in-flight.ts), over real
 * sockets: a body that does not fit is answered 429 with Retry-After before it is uploaded (a declared length:
 * whole for its key, in the process what has arrived) or at the chunk that overflows (chunked), bodies within the
 * caps are answered as before, and every byte is given back when its request ends, an aborted upload included.
 */

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;
const XS = Buffer.alloc(CHUNK, 'x');
// A batch with a field the API does not know: read and parsed whole, then answered 400.
const HEAD = Buffer.from('{"emails":[{"from":"a@example.com","to":["b@example.net"],"subject":"s","html":"');
const TAIL = Buffer.from('"}],"not_a_field":1}');

/** Any `mk_...` bearer is a key of its own: its id is the credential. */
async function admitAnyKey(ctx: CallContext): Promise<Principal> {
  const key = callCredential(ctx);
  if (key === undefined || !key.startsWith('mk_')) throw new AppError('unauthorized', 'Invalid or missing API key');
  ctx.principal = {
    keyId: key,
    accountId: 'acc_1',
    permission: 'all',
    allowedDomains: [],
    accountStatus: 'healthy',
    dailyQuota: 100,
  };
  return ctx.principal;
}

async function startRest(limits: BytesInFlightLimits): Promise<{ port: number; bytes: BytesInFlight }> {
  const bytes = new BytesInFlight(limits);
  const { app } = await buildTestRestApp({ bytesInFlight: bytes, admitApi: admitAnyKey });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: (app.server.address() as AddressInfo).port, bytes };
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { error?: string; message?: string };
  /** Body bytes written when the answer arrived. */
  sentWhenAnswered: number;
}

interface Upload {
  answer: Promise<Answer>;
  /** Resolves once `pauseAt` bytes are written (at once without a pause). */
  paused: Promise<void>;
  resume(): void;
  abort(): void;
}

/**
 * POSTs a `size`-byte batch to /emails/batch, written 64 KiB at a time and no more once the answer came. With
 * `pauseAt`, writing stops there until resume(); `chunked` sends no Content-Length.
 */
function upload(
  port: number,
  key: string,
  size: number,
  options: { chunked?: boolean; pauseAt?: number; path?: string } = {},
): Upload {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (!options.chunked) headers['content-length'] = String(size);
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: options.path ?? '/v1/mail/emails/batch',
    headers,
    agent: false,
  });
  let sent = 0;
  let answeredAt: number | undefined;
  let resume = () => {};
  let pausedResolve = () => {};
  const paused = new Promise<void>((resolve) => (pausedResolve = resolve));
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      answeredAt = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
          body: text === '' ? {} : (JSON.parse(text) as Answer['body']),
          sentWhenAnswered: answeredAt!,
        });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (answeredAt === undefined) reject(err);
    });
  });
  const write = async (chunk: Buffer) => {
    if (req.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        req.off('drain', done);
        req.off('close', done);
        resolve();
      };
      req.on('drain', done);
      req.on('close', done);
    });
  };
  void (async () => {
    await write(HEAD);
    sent += HEAD.length;
    const end = size - TAIL.length;
    while (sent < end && answeredAt === undefined && !req.destroyed) {
      if (options.pauseAt !== undefined && sent >= options.pauseAt) {
        const pausedAt = options.pauseAt;
        options.pauseAt = undefined;
        await new Promise<void>((resolve) => {
          resume = resolve;
          pausedResolve();
        });
        if (sent < pausedAt) break;
      }
      const n = Math.min(CHUNK, end - sent);
      await write(XS.subarray(0, n));
      sent += n;
    }
    pausedResolve();
    if (answeredAt === undefined && !req.destroyed) req.end(TAIL);
  })().catch(() => {});
  return {
    answer,
    paused,
    resume: () => resume(),
    abort: () => {
      answer.catch(() => {});
      req.destroy();
    },
  };
}

const tooMany = (message: RegExp) => ({
  status: 429,
  retryAfter: '1',
  body: { error: 'too many requests', message: expect.stringMatching(message) },
});

describe('REST request bodies in flight', () => {
  it('one key sending six 60 MiB batches at once: one is read, five are 429 with Retry-After before their upload, and memory grows by one', async () => {
    // The defaults: 256 MiB per process, 64 MiB per key (config.ts).
    const { port, bytes } = await startRest({ process: 256 * MiB, perKey: 64 * MiB });
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const answers = await Promise.all(Array.from({ length: 6 }, () => upload(port, 'mk_one', 60 * MiB).answer));
    clearInterval(sampler);

    const read = answers.filter((a) => a.status !== 429);
    const refused = answers.filter((a) => a.status === 429);
    expect(read.map((a) => a.status)).toEqual([400]);
    expect(refused).toHaveLength(5);
    for (const a of refused) {
      expect(a).toMatchObject(tooMany(/^This API key already has 64 MiB of request bodies in flight/));
      // Answered on arrival: what had left was socket buffers, not the 60 MiB.
      expect(a.sentWhenAnswered).toBeLessThan(8 * MiB);
    }
    // One 60 MiB body read, decoded and parsed grew it by 190 MiB; all six, read before the cap, by 587 MiB.
    expect(peak - before).toBeLessThan(320 * MiB);
    await eventually(async () => (bytes.held() === 0 ? true : undefined));
  }, 60_000);

  it('per key first, then the process: bodies over either cap are refused by name, the others answered', async () => {
    const { port, bytes } = await startRest({ process: 48 * MiB, perKey: 32 * MiB });
    // Two bodies in flight, held open near their end: their keys are charged the declared 20 MiB each, the
    // process the 19 MiB each that arrived.
    const a1 = upload(port, 'mk_a', 20 * MiB, { pauseAt: 19 * MiB });
    const b1 = upload(port, 'mk_b', 20 * MiB, { pauseAt: 19 * MiB });
    await Promise.all([a1.paused, b1.paused]);
    await eventually(async () => (bytes.held() >= 38 * MiB ? true : undefined));
    expect([bytes.held('mk_a'), bytes.held('mk_b')]).toEqual([20 * MiB, 20 * MiB]);

    const [a2, c1, d1] = await Promise.all([
      upload(port, 'mk_a', 20 * MiB).answer,
      upload(port, 'mk_c', 20 * MiB).answer,
      upload(port, 'mk_d', 20 * MiB).answer,
    ]);
    expect(a2).toMatchObject(
      tooMany(/^This API key already has 32 MiB of request bodies in flight \(the most it may\)/),
    );
    expect(c1).toMatchObject(
      tooMany(/^The server already holds 48 MiB of request bodies in flight \(the most it takes\); retry shortly$/),
    );
    expect(d1).toMatchObject(tooMany(/^The server already holds 48 MiB/));
    for (const a of [a2, c1, d1]) expect(a.sentWhenAnswered).toBeLessThan(8 * MiB);

    // A small request of another key still fits beside them, and is answered as always.
    const small = await upload(port, 'mk_c', 200).answer;
    expect(small.status).toBe(400);

    a1.resume();
    b1.resume();
    expect((await a1.answer).status).toBe(400);
    expect((await b1.answer).status).toBe(400);
    await eventually(async () => (bytes.held() === 0 ? true : undefined));
    expect([bytes.held('mk_a'), bytes.held('mk_b'), bytes.held('mk_c')]).toEqual([0, 0, 0]);

    // With the bytes given back, the same body is read again.
    expect((await upload(port, 'mk_a', 20 * MiB).answer).status).toBe(400);
  }, 60_000);

  it('a chunked body is counted as it arrives: from the chunk that overflows it is dropped and answered 429; a request within the cap still succeeds', async () => {
    const { port, bytes } = await startRest({ process: 256 * MiB, perKey: 32 * MiB });
    const held = upload(port, 'mk_a', 20 * MiB, { pauseAt: MiB });
    await held.paused;
    await eventually(async () => (bytes.held('mk_a') === 20 * MiB ? true : undefined));

    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, bytes.held('mk_a'))), 5);
    const chunked = await upload(port, 'mk_a', 20 * MiB, { chunked: true }).answer;
    clearInterval(sampler);
    // Answered once the body has ended (a client that reads no answer before then still gets it); what came after
    // the overflow was dropped, never held.
    expect(chunked).toMatchObject(tooMany(/^This API key already has 32 MiB/));
    expect(most).toBeLessThanOrEqual(32 * MiB);
    await eventually(async () => (bytes.held('mk_a') === 20 * MiB ? true : undefined));

    // The same key, a real send within its cap: 200.
    const body = JSON.stringify({
      from: 'Sender <sender@example.com>',
      to: ['a@example.net'],
      subject: 'Hello',
      text: 'Hi',
    });
    const ok = await fetch(`http://127.0.0.1:${port}/v1/mail/emails`, {
      method: 'POST',
      headers: { authorization: 'Bearer mk_a', 'content-type': 'application/json' },
      body,
    });
    expect(ok.status).toBe(200);

    held.resume();
    expect((await held.answer).status).toBe(400);
    await eventually(async () => (bytes.held() === 0 ? true : undefined));
  }, 60_000);

  it('an aborted upload gives its bytes back, declared or chunked; a body without a valid key is never counted', async () => {
    const { port, bytes } = await startRest({ process: 256 * MiB, perKey: 64 * MiB });
    const declared = upload(port, 'mk_a', 40 * MiB, { pauseAt: 2 * MiB });
    const chunked = upload(port, 'mk_b', 40 * MiB, { chunked: true, pauseAt: 2 * MiB });
    await Promise.all([declared.paused, chunked.paused]);
    await eventually(async () => (bytes.held('mk_a') === 40 * MiB && bytes.held('mk_b') >= MiB ? true : undefined));
    // A body announced but not sent holds its key's share only: in the process, what arrived.
    expect(bytes.held()).toBeLessThan(8 * MiB);
    declared.abort();
    chunked.abort();
    await eventually(async () => (bytes.held() === 0 ? true : undefined));
    expect([bytes.held('mk_a'), bytes.held('mk_b')]).toEqual([0, 0]);

    const stranger = await upload(port, 'not-a-key', 60 * MiB).answer;
    expect(stranger).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(bytes.held()).toBe(0);
  }, 60_000);
});
