import { describe, expect, it } from 'vitest';
import { matchRecord, type Answer } from '../../src/domain/dns-match.js';
import {
  checksOut,
  dkimSelector,
  expectedRecords,
  failingRecords,
  nextStatus,
  type ExpectedRecord,
  type PublishedKey,
  type PublishSettings,
  type StoredStatuses,
} from '../../src/domain/dns-records.js';

const SETTINGS: PublishSettings = { hostname: 'mx.mailer.test', spfInclude: undefined, returnPathDomain: undefined };
const KEY = {
  id: 'dk_1',
  selector: 'm20261124',
  publicKey: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAabc+/=',
  status: 'active' as const,
};
const PENDING = { id: 'dk_2', selector: 'm20261201', publicKey: 'MIIBIjANBgkqNEWKEY', status: 'pending' as const };
const domain = (keys: PublishedKey[] = [KEY], inboundDomains: string[] = []) => ({
  name: 'acme.test',
  verificationToken: 'tok123',
  keys,
  inboundDomains,
});
const records = (settings = SETTINGS, keys: PublishedKey[] = [KEY]) => expectedRecords(domain(keys), settings);
const byPurpose = (rs: ExpectedRecord[], purpose: string) => rs.find((r) => r.purpose === purpose)!;
const txt = (...values: string[]): Answer => ({ type: 'TXT', values });

describe('records to publish', () => {
  it('lists ownership, spf, dkim (active then pending), return path MX and SPF, dmarc, in that order', () => {
    const rs = records(SETTINGS, [PENDING, KEY]);
    expect(rs.map((r) => [r.purpose, r.type, r.name, r.value, r.required])).toEqual([
      ['ownership', 'TXT', '_mailer.acme.test', 'mailer-verification=tok123', true],
      ['spf', 'TXT', 'acme.test', 'v=spf1 a:mx.mailer.test ~all', true],
      ['dkim', 'TXT', 'm20261124._domainkey.acme.test', `v=DKIM1; k=rsa; p=${KEY.publicKey}`, true],
      ['dkim', 'TXT', 'm20261201._domainkey.acme.test', `v=DKIM1; k=rsa; p=${PENDING.publicKey}`, false],
      ['return_path', 'MX', 'rp.acme.test', '10 mx.mailer.test', false],
      ['return_path_spf', 'TXT', 'rp.acme.test', 'v=spf1 a:mx.mailer.test -all', false],
      ['dmarc', 'TXT', '_dmarc.acme.test', 'v=DMARC1; p=none;', false],
    ]);
    expect(new Set(rs.map((r) => r.key)).size).toBe(rs.length);
  });

  it('says include:<MAILER_SPF_INCLUDE> when set, and has no return-path records when MAILER_RETURN_PATH_DOMAIN is set', () => {
    const rs = records({
      hostname: 'mx.mailer.test',
      spfInclude: '_spf.mailer.test',
      returnPathDomain: 'bounces.mailer.test',
    });
    expect(byPurpose(rs, 'spf').value).toBe('v=spf1 include:_spf.mailer.test ~all');
    expect(rs.map((r) => r.purpose)).toEqual(['ownership', 'spf', 'dkim', 'dmarc']);
  });
});

describe('inbound MX records', () => {
  const rs = expectedRecords(domain([KEY], ['in.acme.test', 'acme.test', 'in.acme.test']), SETTINGS);
  const inbound = rs.filter((r) => r.purpose === 'inbound');

  it("one per domain the domain's routes are on, pointing at MAILER_HOSTNAME, last, none required", () => {
    expect(inbound.map((r) => [r.type, r.name, r.value, r.required, r.key])).toEqual([
      ['MX', 'acme.test', '10 mx.mailer.test', false, 'inbound:acme.test'],
      ['MX', 'in.acme.test', '10 mx.mailer.test', false, 'inbound:in.acme.test'],
    ]);
    expect(rs.slice(-2)).toEqual(inbound);
    expect(records().some((r) => r.purpose === 'inbound')).toBe(false);
  });

  it('are matched as MX records; the domain checks out without them, and they are never failing records', () => {
    const [mx] = inbound;
    expect(matchRecord(mx!, { type: 'MX', values: [{ exchange: 'MX.Mailer.Test.', priority: 10 }] })).toBe('verified');
    expect(matchRecord(mx!, { type: 'MX', values: [{ exchange: 'aspmx.l.google.com', priority: 1 }] })).toBe('failed');
    const statuses: StoredStatuses = Object.fromEntries(
      rs.map((r) => [r.key, { status: r.purpose === 'inbound' ? 'failed' : 'verified', everVerified: true }]),
    );
    expect(checksOut(rs, statuses)).toBe(true);
    expect(failingRecords(rs, statuses)).toEqual([]);
  });
});

describe('matching what DNS answered', () => {
  const rs = records();
  const spf = byPurpose(rs, 'spf');
  it('ownership: our token; another token is failed; nothing is absent', () => {
    const own = byPurpose(rs, 'ownership');
    expect(matchRecord(own, txt('other', 'mailer-verification=tok123'))).toBe('verified');
    expect(matchRecord(own, txt('mailer-verification=someone-else'))).toBe('failed');
    expect(matchRecord(own, txt('unrelated'))).toBe('absent');
    expect(matchRecord(own, txt())).toBe('absent');
  });

  it('spf: exactly one v=spf1 record holding our mechanism as a term, case and + qualifier aside', () => {
    expect(matchRecord(spf, txt('v=spf1 include:_spf.google.com a:mx.mailer.test ~all'))).toBe('verified');
    expect(matchRecord(spf, txt('V=SPF1 +A:MX.Mailer.Test -all', 'google-site-verification=x'))).toBe('verified');
    expect(matchRecord(spf, txt('v=spf1 a:mx.mailer.test. ~all'))).toBe('verified');
    expect(matchRecord(spf, txt('v=spf1 include:_spf.google.com ~all'))).toBe('failed');
    // A term that merely contains ours is not ours; neither is a negative qualifier.
    expect(matchRecord(spf, txt('v=spf1 a:mx.mailer.test.evil ~all'))).toBe('failed');
    expect(matchRecord(spf, txt('v=spf1 -a:mx.mailer.test ~all'))).toBe('failed');
    expect(matchRecord(spf, txt('v=spf1 a:mx.mailer.test ~all', 'v=spf1 mx ~all'))).toBe('failed');
    expect(matchRecord(spf, txt('v=spf10 a:mx.mailer.test'))).toBe('absent');
    expect(matchRecord(spf, txt('some other text'))).toBe('absent');
  });

  it('dkim: the p= tag equals our key, whitespace and tag order aside', () => {
    const dkim = byPurpose(rs, 'dkim');
    expect(matchRecord(dkim, txt(dkim.value))).toBe('verified');
    expect(matchRecord(dkim, txt(`p=MIIBIjANBgkqhkiG9w0BAQEF AAOCAQ8AMIIBCgKCAQEAabc+/= ; k=rsa; v=DKIM1`))).toBe(
      'verified',
    );
    expect(matchRecord(dkim, txt('v=DKIM1;p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAabc+/='))).toBe('verified');
    expect(matchRecord(dkim, txt('v=DKIM1; k=rsa; p=MIIBIjANBgkqOTHER'))).toBe('failed');
    expect(matchRecord(dkim, txt(`v=DKIM1; k=ed25519; p=${KEY.publicKey}`))).toBe('failed');
    expect(matchRecord(dkim, txt('v=DKIM1; k=rsa; p='))).toBe('failed');
    expect(matchRecord(dkim, txt())).toBe('absent');
  });

  it('return path: an MX exchange that is our host, case and trailing dot aside', () => {
    const mx = byPurpose(rs, 'return_path');
    expect(
      matchRecord(mx, {
        type: 'MX',
        values: [
          { exchange: 'other.test', priority: 5 },
          { exchange: 'MX.mailer.test.', priority: 20 },
        ],
      }),
    ).toBe('verified');
    expect(matchRecord(mx, { type: 'MX', values: [{ exchange: 'other.test', priority: 5 }] })).toBe('failed');
    expect(matchRecord(mx, { type: 'MX', values: [] })).toBe('absent');
    expect(matchRecord(byPurpose(rs, 'return_path_spf'), txt('v=spf1 a:mx.mailer.test -all'))).toBe('verified');
  });

  it('dmarc: one record starting v=DMARC1, whatever its policy', () => {
    const dmarc = byPurpose(rs, 'dmarc');
    expect(matchRecord(dmarc, txt('v=DMARC1; p=reject; rua=mailto:d@acme.test'))).toBe('verified');
    expect(matchRecord(dmarc, txt('v=DMARC1; p=none', 'v=DMARC1; p=reject'))).toBe('failed');
    expect(matchRecord(dmarc, txt('v=spf1 -all'))).toBe('absent');
  });
});

describe('statuses', () => {
  it('verified when found; pending when absent and never seen; failed when wrong, or gone after being verified', () => {
    expect(nextStatus(undefined, 'verified')).toEqual({ status: 'verified', everVerified: true });
    expect(nextStatus(undefined, 'absent')).toEqual({ status: 'pending', everVerified: false });
    expect(nextStatus(undefined, 'failed')).toEqual({ status: 'failed', everVerified: false });
    expect(nextStatus({ status: 'verified', everVerified: true }, 'absent')).toEqual({
      status: 'failed',
      everVerified: true,
    });
    expect(nextStatus({ status: 'failed', everVerified: true }, 'absent')).toEqual({
      status: 'failed',
      everVerified: true,
    });
    expect(nextStatus({ status: 'failed', everVerified: false }, 'absent')).toEqual({
      status: 'pending',
      everVerified: false,
    });
  });

  it('a lookup that could not be made keeps the status it had', () => {
    expect(nextStatus({ status: 'verified', everVerified: true }, 'unknown')).toEqual({
      status: 'verified',
      everVerified: true,
    });
    expect(nextStatus(undefined, 'unknown')).toEqual({ status: 'pending', everVerified: false });
  });

  const statuses = (
    rs: ExpectedRecord[],
    status: (r: ExpectedRecord) => 'verified' | 'pending' | 'failed',
  ): StoredStatuses =>
    Object.fromEntries(rs.map((r) => [r.key, { status: status(r), everVerified: status(r) === 'verified' }]));

  it('a domain checks out with ownership, spf and the active key verified; the advisory ones and a pending key do not count', () => {
    const rs = records(SETTINGS, [KEY, PENDING]);
    expect(
      checksOut(
        rs,
        statuses(rs, (r) => (r.required ? 'verified' : 'pending')),
      ),
    ).toBe(true);
    expect(
      checksOut(
        rs,
        statuses(rs, (r) => (r.purpose === 'spf' ? 'failed' : 'verified')),
      ),
    ).toBe(false);
    expect(checksOut(rs, {})).toBe(false);
    // Without an active key there is nothing to sign with: it cannot check out.
    const keyless = records(SETTINGS, []);
    expect(
      checksOut(
        keyless,
        statuses(keyless, () => 'verified'),
      ),
    ).toBe(false);
  });

  it('failing: required records failed; pending (never published) ones and advisory ones are not', () => {
    const rs = records();
    expect(
      failingRecords(
        rs,
        statuses(rs, (r) => (r.purpose === 'dkim' ? 'failed' : 'verified')),
      ).map((r) => r.purpose),
    ).toEqual(['dkim']);
    expect(
      failingRecords(
        rs,
        statuses(rs, () => 'pending'),
      ),
    ).toEqual([]);
    expect(
      failingRecords(
        rs,
        statuses(rs, (r) => (r.required ? 'verified' : 'failed')),
      ),
    ).toEqual([]);
  });
});

describe('DKIM selectors', () => {
  it('are dated, with a suffix when the domain already used that one', () => {
    const day = new Date('2026-11-24T23:59:00Z');
    expect(dkimSelector(day, [])).toBe('m20261124');
    expect(dkimSelector(day, ['m20261124'])).toBe('m20261124-2');
    expect(dkimSelector(day, ['m20261124', 'm20261124-2'])).toBe('m20261124-3');
    expect(dkimSelector(day, [])).toMatch(/^[a-z0-9-]+$/);
  });
});
