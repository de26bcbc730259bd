import { Writable } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { AdminService } from '../../src/gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import { buildRestApp } from '../../src/http/rest-app.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { requestIdFrom } from '../../src/telemetry/request-id.js';
import { withLogFields } from '../../src/telemetry/log-context.js';
import { buildTestRestApp } from '../helpers/in-memory-apps.js';
import { TEST_KEY } from '../helpers/fake-api-deps.js';
import { BytesInFlight } from '../../src/bytes-in-flight.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A logger whose JSON lines are kept, to read back. */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '')) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger('info', 'test', stream), lines, raw };
}

describe('request ids', () => {
  it('takes a short id of safe characters from the caller and makes one for anything else', () => {
    expect(requestIdFrom('abc-123_X.y:z')).toBe('abc-123_X.y:z');
    expect(requestIdFrom('a'.repeat(64))).toBe('a'.repeat(64));
    for (const bad of ['a'.repeat(65), 'has space', 'quote"', 'new\nline', '', ['a', 'b'], undefined]) {
      expect(requestIdFrom(bad)).toMatch(UUID);
    }
  });

  it("answers every REST request with its id: the caller's when acceptable, else a new one, errors included", async () => {
    const { app } = await buildTestRestApp();
    const ok = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-me.1' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-request-id']).toBe('trace-me.1');

    const made = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'no good<script>' } });
    expect(made.headers['x-request-id']).toMatch(UUID);
    const other = await app.inject({ method: 'GET', url: '/healthz' });
    expect(other.headers['x-request-id']).toMatch(UUID);
    expect(other.headers['x-request-id']).not.toBe(made.headers['x-request-id']);

    const errors = [
      await app.inject({ method: 'POST', url: '/v1/mail/emails', payload: {}, headers: { 'x-request-id': 'e-401' } }),
      await app.inject({ method: 'GET', url: '/v1/mail/nowhere', headers: { 'x-request-id': 'e-404' } }),
      await app.inject({ method: 'PATCH', url: '/v1/mail/emails', headers: { 'x-request-id': 'e-405' } }),
      await app.inject({ method: 'GET', url: '/v1/mail/emails/%zz', headers: { 'x-request-id': 'e-bad-url' } }),
      await app.inject({
        method: 'POST',
        url: '/v1/mail/emails',
        payload: '{not json',
        headers: { authorization: `Bearer ${TEST_KEY}`, 'x-request-id': 'e-json' },
      }),
    ];
    expect(errors.map((r) => [r.statusCode, r.headers['x-request-id']])).toEqual([
      [401, 'e-401'],
      [404, 'e-404'],
      [405, 'e-405'],
      [400, 'e-bad-url'],
      [400, 'e-json'],
    ]);
  });

  it("puts the request id in every log line written while serving it, deep ones and the error handler's included", async () => {
    const { logger, lines, raw } = capturingLogger();
    // A handler that logs through a logger made at start (as services do), then fails.
    const failing = async () => {
      logger.warn({ step: 'deep' }, 'a service logs');
      throw new Error('boom');
    };
    const refuse = async () => {
      throw new Error('not reached');
    };
    const app = await buildRestApp({
      emailApi: {
        ...Object.fromEntries(EmailService.methods.map((m) => [m.localName, refuse])),
        streamSuppressionsCsv: refuse,
        sendEmail: failing,
      },
      adminApi: {
        ...Object.fromEntries(AdminService.methods.map((m) => [m.localName, refuse])),
        streamAccountSuppressionsCsv: refuse,
      },
      admitApi: async () => undefined,
      admitAdmin: async () => undefined,
      logger,
      metrics: createMetrics(),
      publicUrl: 'http://mailer.test',
      admitMetrics: () => {},
      checkReady: async () => [],
      bytesInFlight: new BytesInFlight({ process: 256 * 1024 * 1024, perKey: 64 * 1024 * 1024 }),
    });
    onTestFinished(() => app.close());

    const res = await app.inject({
      method: 'POST',
      url: '/v1/mail/emails',
      payload: {},
      headers: { 'x-request-id': 'req-logs-1' },
    });
    expect(res.statusCode).toBe(500);
    expect(res.headers['x-request-id']).toBe('req-logs-1');
    const deep = lines.find((l) => l.step === 'deep');
    const failed = lines.find((l) => l.msg === 'request failed');
    expect(deep?.reqId).toBe('req-logs-1');
    expect(failed?.reqId).toBe('req-logs-1');
    // One key once per line, even where a logger already binds it.
    for (const line of raw) expect(line.match(/"reqId":/g)?.length ?? 0).toBeLessThanOrEqual(1);

    // Outside a request nothing is added.
    logger.info('idle');
    expect(lines.at(-1)).not.toHaveProperty('reqId');
  });

  it("adds the work's fields to lines of any logger, the innermost winning, without repeating a bound key", () => {
    const { logger, lines, raw } = capturingLogger();
    withLogFields({ reqId: 'r1' }, () => {
      withLogFields({ emailId: 'em_1' }, () => logger.info('inner'));
      logger.child({ reqId: 'bound' }).info('child');
    });
    expect(lines[0]).toMatchObject({ reqId: 'r1', emailId: 'em_1', msg: 'inner' });
    expect(lines[1]).toMatchObject({ reqId: 'bound', msg: 'child' });
    expect(raw[1]!.match(/"reqId":/g)).toHaveLength(1);
  });
});
