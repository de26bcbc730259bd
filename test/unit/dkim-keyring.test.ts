import crypto from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createDkimKeyring } from '../../src/delivery/dkim/dkim-keyring.js';
import { sealedContext } from '../../src/domain/sealed-values.js';
import { createKeyBox } from '../../src/secrets/key-box.js';
import { sealUnbound } from '../helpers/legacy-sealing.js';

const KEY = crypto.randomBytes(32);
const box = createKeyBox(KEY);
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIsecretmaterial\n-----END PRIVATE KEY-----\n';
/** The private key as stored for the key row `keyId`. */
const sealedFor = (keyId: string, b = box) => b.seal(PEM, sealedContext.dkimPrivateKey(keyId));

/** A lookup over a table, counting its calls: the repository seam. */
function table(rows: Record<string, { domainName: string; keyId: string; selector: string; sealed: string }>) {
  const calls: string[] = [];
  return {
    calls,
    lookup: async (accountId: string, domainName: string) => {
      calls.push(`${accountId}/${domainName}`);
      return rows[`${accountId}/${domainName}`];
    },
  };
}

describe('DKIM keyring', () => {
  it("answers the active key of the account's domain, opened; undefined for a domain without one", async () => {
    const t = table({
      'acc_1/acme.test': { domainName: 'acme.test', keyId: 'dk_1', selector: 'm20261124', sealed: sealedFor('dk_1') },
    });
    const ring = createDkimKeyring({ lookup: t.lookup, keyBox: box });
    expect(await ring.signingKey('acc_1', 'Acme.Test')).toEqual({
      domainName: 'acme.test',
      keySelector: 'm20261124',
      privateKey: PEM,
    });
    expect(await ring.signingKey('acc_2', 'acme.test')).toBeUndefined();
    expect(await ring.signingKey('acc_1', 'not a domain')).toBeUndefined();
  });

  it('keeps keys for the TTL, then asks again; concurrent asks share one lookup', async () => {
    let clock = 0;
    const t = table({
      'acc_1/acme.test': { domainName: 'acme.test', keyId: 'dk_1', selector: 's1', sealed: sealedFor('dk_1') },
    });
    const ring = createDkimKeyring({ lookup: t.lookup, keyBox: box, ttlMs: 60_000, now: () => clock });
    await Promise.all([ring.signingKey('acc_1', 'acme.test'), ring.signingKey('acc_1', 'acme.test')]);
    clock = 59_999;
    await ring.signingKey('acc_1', 'acme.test');
    await ring.signingKey('acc_1', 'nokey.test');
    await ring.signingKey('acc_1', 'nokey.test');
    expect(t.calls).toEqual(['acc_1/acme.test', 'acc_1/nokey.test']);
    clock = 60_000;
    await ring.signingKey('acc_1', 'acme.test');
    expect(t.calls).toEqual(['acc_1/acme.test', 'acc_1/nokey.test', 'acc_1/acme.test']);
  });

  it('is bounded: beyond maxEntries the oldest entry is dropped', async () => {
    const t = table({});
    const ring = createDkimKeyring({ lookup: t.lookup, keyBox: box, maxEntries: 2 });
    for (const d of ['a.test', 'b.test', 'c.test', 'a.test']) await ring.signingKey('acc', d);
    expect(t.calls).toEqual(['acc/a.test', 'acc/b.test', 'acc/c.test', 'acc/a.test']);
  });

  it('a key that cannot be opened fails without the key in the error, and is not remembered', async () => {
    const sealed = sealedFor('dk_1', createKeyBox(crypto.randomBytes(32)));
    const t = table({ 'acc/acme.test': { domainName: 'acme.test', keyId: 'dk_1', selector: 's1', sealed } });
    const ring = createDkimKeyring({ lookup: t.lookup, keyBox: box });
    const err = await ring.signingKey('acc', 'acme.test').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/DKIM key of acme\.test .* cannot be opened/);
    expect((err as Error).message).not.toContain(sealed);
    expect((err as Error).message).not.toContain('MIIsecret');
    await ring.signingKey('acc', 'acme.test').catch(() => undefined);
    expect(t.calls).toHaveLength(2);
  });

  it('a key sealed for another key row does not open as this one; one sealed before keys were bound to rows (kb1) still does', async () => {
    const moved = table({
      'acc/acme.test': { domainName: 'acme.test', keyId: 'dk_2', selector: 's1', sealed: sealedFor('dk_1') },
    });
    await expect(
      createDkimKeyring({ lookup: moved.lookup, keyBox: box }).signingKey('acc', 'acme.test'),
    ).rejects.toThrow(/cannot be opened: .*failed authentication/);
    const legacy = table({
      'acc/acme.test': { domainName: 'acme.test', keyId: 'dk_3', selector: 's1', sealed: sealUnbound(KEY, PEM) },
    });
    expect(
      (await createDkimKeyring({ lookup: legacy.lookup, keyBox: box }).signingKey('acc', 'acme.test'))?.privateKey,
    ).toBe(PEM);
  });

  it('the key prints and serialises without its private key, yet spreads whole into signer options', async () => {
    const t = table({
      'acc/acme.test': { domainName: 'acme.test', keyId: 'dk_1', selector: 's1', sealed: sealedFor('dk_1') },
    });
    const key = (await createDkimKeyring({ lookup: t.lookup, keyBox: box }).signingKey('acc', 'acme.test'))!;
    expect(JSON.stringify({ key })).not.toContain('MIIsecret');
    expect(inspect(key)).not.toContain('MIIsecret');
    expect({ ...key }).toEqual({ domainName: 'acme.test', keySelector: 's1', privateKey: PEM });
  });
});
