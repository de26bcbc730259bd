import { describe, expect, it } from 'vitest';
import { clientAddress, type CallContext } from '../../src/api/call-context.js';
import { loadConfig } from '../../src/config.js';
import { buildTestRestApp } from '../helpers/in-memory-apps.js';

/**
 * Whose address a REST request counts as (the admin-token throttle's client, tracking events'
 * `ip_address`): the TCP peer, or, from a proxy listed in MAILER_TRUSTED_PROXIES only, the client its
 * X-Forwarded-For names.
 */

/** The REST app with `trustedProxies`, and the client address each admin call was admitted as. */
async function appTrusting(trustedProxies: string[] | undefined) {
  const seen: string[] = [];
  const { app } = await buildTestRestApp({
    trustedProxies,
    admitAdmin: async (ctx: CallContext) => {
      seen.push(clientAddress(ctx));
    },
  });
  const from = async (remoteAddress: string, forwardedFor?: string) => {
    const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
    await app.inject({ method: 'GET', url: '/v1/mail/admin/accounts', remoteAddress, headers });
    return seen.at(-1);
  };
  return from;
}

describe('MAILER_TRUSTED_PROXIES', () => {
  it('takes the client from X-Forwarded-For only when the peer is a listed proxy', async () => {
    const from = await appTrusting(['10.0.0.7', 'fd00:1::/64']);
    expect(await from('10.0.0.7', '198.51.100.1')).toBe('198.51.100.1');
    expect(await from('fd00:1::9', '198.51.100.2')).toBe('198.51.100.2');
    // What the client wrote itself comes before what the proxy appended: only the proxy's entry counts.
    expect(await from('10.0.0.7', '203.0.113.66, 198.51.100.3')).toBe('198.51.100.3');
    // Anyone else naming an address is the peer it is.
    expect(await from('10.0.0.8', '198.51.100.4')).toBe('10.0.0.8');
    expect(await from('192.0.2.5', '10.0.0.7')).toBe('192.0.2.5');
    // From the proxy without the header: the proxy.
    expect(await from('10.0.0.7')).toBe('10.0.0.7');
  });

  it('unset, believes no X-Forwarded-For', async () => {
    for (const proxies of [undefined, []]) {
      const from = await appTrusting(proxies);
      expect(await from('10.0.0.7', '198.51.100.1')).toBe('10.0.0.7');
      expect(await from('127.0.0.1', '198.51.100.1')).toBe('127.0.0.1');
    }
  });

  it('is read as addresses and CIDR ranges, refusing anything else at start', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ MAILER_TRUSTED_PROXIES: ' 172.30.80.10 , 10.0.0.0/8,fd00::/8 ' }).trustedProxies).toEqual([
      '172.30.80.10',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    for (const bad of ['proxy', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/8', '10.0.0.0/x', '*']) {
      expect(() => loadConfig({ MAILER_TRUSTED_PROXIES: bad }), bad).toThrow(
        /^MAILER_TRUSTED_PROXIES must list IP addresses or CIDR ranges/,
      );
    }
  });
});
