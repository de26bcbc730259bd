import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startInboundServer, type InboundServer } from '../../src/inbound/report-listener.js';
import { loadTlsCertificate } from '../../src/inbound/tls-certificate.js';

/**
 * What an SMTP connection's work logs names the connection (`smtpSession`), as a request's lines name the
 * request (`reqId`): a warning written deep inside the service while a message is handled, and the
 * listener's own. The inbound listener, on loopback, taking mail from nodemailer.
 */

const lines: Record<string, unknown>[] = [];
const logger = createLogger(
  'info',
  'test',
  new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  }),
);
let server: InboundServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'smtp-session-logs-'));
  const tls = await loadTlsCertificate({ certFile: undefined, keyFile: undefined, dataDir, hostname: 'localhost' });
  server = await startInboundServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    tls,
    acceptsRecipient: () => true,
    limits: { perAddress: 10, setupMs: 30_000 },
    async onMessage(raw) {
      // As a service deep inside would, with no logger bound to the connection.
      logger.warn({ subject: /^subject: (.*)$/im.exec(raw.toString())?.[1] }, 'handling a report');
      if (raw.toString().includes('fail me')) throw new Error('the database is away');
      return 'recorded';
    },
  });
});
afterAll(async () => {
  await server.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const send = (subject: string) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port: server.port, ignoreTLS: true })
    .sendMail({ from: 'a@example.com', to: 'bounces@example.com', subject, text: subject });

describe('SMTP session ids in the logs', () => {
  it("each connection's lines carry its own session id, the listener's warning included", async () => {
    await send('first');
    await expect(send('fail me')).rejects.toMatchObject({ responseCode: 451 });
    const handling = lines.filter((l) => l.msg === 'handling a report');
    expect(handling.map((l) => l.subject)).toEqual(['first', 'fail me']);
    const [first, failed] = handling.map((l) => l.smtpSession);
    expect(first).toMatch(/^[a-z0-9]{8,}$/);
    expect(failed).toMatch(/^[a-z0-9]{8,}$/);
    expect(failed).not.toBe(first);
    const warning = lines.find((l) => l.msg === 'inbound message not handled; asked to retry');
    expect(warning?.smtpSession).toBe(failed);
  });
});
