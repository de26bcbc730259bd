import { describe, expect, it } from 'vitest';
import type { MtaStsPolicy } from '../../src/domain/entities/egress.js';
import type { MxRoute } from '../../src/delivery/transport/direct/mx-route.js';
import {
  applyMtaStsPolicy,
  mtaStsFailure,
  mxMatchesPolicy,
} from '../../src/delivery/transport/direct/mta-sts-route.js';

const skipped = [
  { kind: 'soft' as const, code: 0, status: '4.4.3', diagnostic: 'DNS lookup of A dead.example failed' },
];
const route: MxRoute = {
  ok: true,
  targets: [
    { exchange: 'mx1.example.com', address: '198.51.100.1' },
    { exchange: 'relay.other.net', address: '198.51.100.2' },
    { exchange: 'mx2.example.com', address: '198.51.100.3' },
  ],
  skipped,
};
const policy = (mode: MtaStsPolicy['mode'], mx: string[]): MtaStsPolicy => ({ mode, mx, maxAgeSeconds: 86400 });

describe('applyMtaStsPolicy', () => {
  it('enforce keeps only the listed MX hosts, in order, and asks for verified TLS', () => {
    const applied = applyMtaStsPolicy(route, policy('enforce', ['*.example.com']), 'example.com');
    expect(applied).toEqual({
      route: {
        ok: true,
        targets: [
          { exchange: 'mx1.example.com', address: '198.51.100.1' },
          { exchange: 'mx2.example.com', address: '198.51.100.3' },
        ],
        skipped,
      },
      mode: 'enforce',
      requireVerifiedTls: true,
      report: null,
    });
  });

  it('enforce with no listed MX host defers the domain with 4.7.5 and connects nowhere', () => {
    const applied = applyMtaStsPolicy(route, policy('enforce', ['mail.elsewhere.org']), 'example.com');
    expect(applied.requireVerifiedTls).toBe(true);
    expect(applied.route.ok).toBe(false);
    if (applied.route.ok) return;
    expect(applied.route.failure).toMatchObject({ kind: 'soft', code: 0, status: '4.7.5' });
    expect(applied.route.failure.diagnostic).toBe(
      '4.7.5 MTA-STS: example.com: MX mx1.example.com, relay.other.net, mx2.example.com not listed in the policy (mx: mail.elsewhere.org)',
    );
  });

  it('testing leaves the route as it is and reports the hosts enforce would have refused', () => {
    const applied = applyMtaStsPolicy(route, policy('testing', ['*.example.com']), 'example.com');
    expect(applied.route).toBe(route);
    expect(applied.mode).toBe('testing');
    expect(applied.requireVerifiedTls).toBe(false);
    expect(applied.report).toBe('testing policy: MX relay.other.net not listed in the policy (mx: *.example.com)');
  });

  it('testing with every host listed reports nothing', () => {
    const applied = applyMtaStsPolicy(route, policy('testing', ['*.example.com', 'relay.other.net']), 'example.com');
    expect(applied).toEqual({ route, mode: 'testing', requireVerifiedTls: false, report: null });
  });

  it('none and no policy change nothing', () => {
    expect(applyMtaStsPolicy(route, policy('none', []), 'example.com')).toEqual({
      route,
      mode: 'none',
      requireVerifiedTls: false,
      report: null,
    });
    expect(applyMtaStsPolicy(route, null, 'example.com')).toEqual({
      route,
      mode: 'none',
      requireVerifiedTls: false,
      report: null,
    });
  });

  it('a route that already failed is left as it is, whatever the policy', () => {
    const failed: MxRoute = { ok: false, failure: skipped[0]! };
    const applied = applyMtaStsPolicy(failed, policy('enforce', ['*.example.com']), 'example.com');
    expect(applied.route).toBe(failed);
  });
});

describe('mxMatchesPolicy', () => {
  const p = policy('enforce', ['mail.example.com', '*.example.net']);
  it('matches exact names case-insensitively, with or without the trailing dot', () => {
    expect(mxMatchesPolicy('MAIL.example.com.', p)).toBe(true);
    expect(mxMatchesPolicy('mail2.example.com', p)).toBe(false);
  });

  it('lets a wildcard stand for exactly one label (RFC 8461 3.1)', () => {
    expect(mxMatchesPolicy('mx.example.net', p)).toBe(true);
    expect(mxMatchesPolicy('a.mx.example.net', p)).toBe(false);
    expect(mxMatchesPolicy('example.net', p)).toBe(false);
    expect(mxMatchesPolicy('badexample.net', p)).toBe(false);
  });

  it('is asked as enforce whatever the mode (validateMx answers valid for none without looking)', () => {
    expect(mxMatchesPolicy('relay.other.net', policy('none', ['mail.example.com']))).toBe(false);
  });
});

describe('mtaStsFailure', () => {
  it('is a soft 4.7.5 deferral', () => {
    expect(mtaStsFailure('example.com', 'certificate of mx.example.com not verified')).toEqual({
      kind: 'soft',
      code: 0,
      status: '4.7.5',
      diagnostic: '4.7.5 MTA-STS: example.com: certificate of mx.example.com not verified',
    });
  });
});
