import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/** MAILER_METRICS_TOKEN set: GET /metrics answers only to that bearer token (unset, it is open: health-openapi.test.ts). */
const METRICS_TOKEN = 'metrics-token-for-the-scraper-0123456789';

const stack = useStack({ MAILER_METRICS_TOKEN: METRICS_TOKEN });
let root: string;
beforeAll(async () => {
  root = stack.api.replace(/\/v1\/mail$/, '');
});

describe('GET /metrics with MAILER_METRICS_TOKEN', () => {
  it.each([
    ['no credentials', {}],
    ['a wrong token', { token: 'metrics-token-for-the-scraper-0123456788' }],
    ['the admin token', { token: ADMIN_TOKEN }],
    ['the token without Bearer', { headers: { authorization: METRICS_TOKEN } }],
  ] as const)('is 401 in {error, message} with %s', async (_name, auth) => {
    const res = await call('GET', `${root}/metrics`, auth);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: 'Invalid or missing metrics token' });
    expect(res.text).not.toContain('mailer_http_requests_total');
  });

  it('is Prometheus text with the token', async () => {
    const res = await fetch(`${root}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    // The refused scrapes above were counted too.
    expect(text).toMatch(/^mailer_http_requests_total\{method="GET",route="\/metrics",status="401"\} [4-9]\d*$/m);
  });

  it('leaves the probes open', async () => {
    expect((await call('GET', `${root}/healthz`)).status).toBe(200);
    expect((await call('GET', `${root}/readyz`)).status).toBe(200);
  });
});
