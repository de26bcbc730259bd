import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DkimKeyRow } from '../../src/domain/entities/dkim-keys.js';
import type { DnsCheckState, DomainRow } from '../../src/domain/entities/domains.js';
import type { DnsResolver } from '../../src/net/dns-resolver.js';
import { createDomainDnsCheck } from '../../src/services/domain-dns-check.js';

const publish = { hostname: 'mx.mailer.test', spfInclude: undefined, returnPathDomain: 'bounces.mailer.test' };
const key = (id: string, selector: string, status: DkimKeyRow['status']): DkimKeyRow => ({
  id,
  domainId: 'dom_1',
  selector,
  algorithm: 'rsa',
  publicKey: `PUB${id}`,
  status,
  createdAt: new Date(0),
  activatedAt: null,
});

/** In-memory repositories and a zone behind the resolver seam. */
function setup() {
  let domain: DomainRow = {
    id: 'dom_1',
    accountId: 'acc_1',
    name: 'acme.test',
    verificationToken: 'tok',
    verifiedAt: new Date(0),
    openTracking: false,
    clickTracking: false,
    createdAt: new Date(0),
    dnsCheckedAt: null,
    dnsStatuses: {},
    dnsFailingSince: null,
  };
  const keys = [key('dk_a', 'old', 'active'), key('dk_b', 'new', 'pending')];
  const txt = new Map<string, string[]>();
  const mx = new Map<string, { exchange: string; priority: number }[]>();
  const routed: { domainId: string; domain: string }[] = [];
  const broken = new Set<string>();
  let clock = 1_000_000;
  const resolver: DnsResolver = {
    resolveTxt: async (name) => {
      if (broken.has(name)) throw Object.assign(new Error('SERVFAIL'), { code: 'ESERVFAIL' });
      return txt.get(name) ?? [];
    },
    resolveMx: async (name) => mx.get(name) ?? [],
    resolve4: async () => [],
    resolve6: async () => [],
  };
  const checks = createDomainDnsCheck({
    resolver,
    publish,
    now: () => new Date(clock),
    logger: pino({ level: 'silent' }),
    domains: {
      recordDnsCheck: async (_id: string, c: DnsCheckState) =>
        (domain = { ...domain, dnsCheckedAt: c.checkedAt, dnsStatuses: c.statuses, dnsFailingSince: c.failingSince }),
      dueForRecheck: async () => [domain],
    },
    inboundRoutes: { domainsOf: async () => routed },
    dkimKeys: {
      listPublished: async () => keys.filter((k) => k.status !== 'retired'),
      promote: async (_domainId: string, id: string) => {
        for (const k of keys) if (k.status === 'active') k.status = 'retired';
        keys.find((k) => k.id === id)!.status = 'active';
        return true;
      },
    },
  });
  const publishAll = () => {
    txt.set('_mailer.acme.test', ['mailer-verification=tok']);
    txt.set('acme.test', ['v=spf1 a:mx.mailer.test ~all']);
    txt.set('old._domainkey.acme.test', ['v=DKIM1; k=rsa; p=PUBdk_a']);
  };
  return {
    checks,
    txt,
    mx,
    routed,
    broken,
    keys,
    publishAll,
    current: () => domain,
    tick: (ms: number) => (clock += ms),
  };
}

describe('domain DNS check', () => {
  it('keeps dns_failing_since from the first failing check until the records are right again', async () => {
    const s = setup();
    s.publishAll();
    await s.checks.check(s.current());
    expect(s.current().dnsFailingSince).toBeNull();
    s.txt.delete('old._domainkey.acme.test');
    s.tick(1000);
    await s.checks.check(s.current());
    const since = s.current().dnsFailingSince;
    expect(since).toEqual(new Date(1_001_000));
    s.tick(1000);
    await s.checks.check(s.current());
    expect(s.current().dnsFailingSince).toEqual(since);
    s.publishAll();
    await s.checks.check(s.current());
    expect(s.current().dnsFailingSince).toBeNull();
  });

  it('a resolver failure leaves statuses as they were and flags nothing', async () => {
    const s = setup();
    s.publishAll();
    await s.checks.check(s.current());
    s.broken.add('acme.test');
    s.broken.add('_mailer.acme.test');
    const { records } = await s.checks.check(s.current());
    expect(records.filter((r) => r.required).map((r) => s.current().dnsStatuses[r.key]?.status)).toEqual([
      'verified',
      'verified',
      'verified',
    ]);
    expect(s.current().dnsFailingSince).toBeNull();
  });

  it("promotes a pending key once its record is found; the retired key's record and status are dropped", async () => {
    const s = setup();
    s.publishAll();
    let checked = await s.checks.check(s.current());
    expect(checked.records.filter((r) => r.purpose === 'dkim').map((r) => r.name)).toEqual([
      'old._domainkey.acme.test',
      'new._domainkey.acme.test',
    ]);
    expect(s.keys.map((k) => k.status)).toEqual(['active', 'pending']);

    s.txt.set('new._domainkey.acme.test', ['v=DKIM1; k=rsa; p=PUBdk_b']);
    checked = await s.checks.check(s.current());
    expect(s.keys.map((k) => k.status)).toEqual(['retired', 'active']);
    expect(checked.records.filter((r) => r.purpose === 'dkim').map((r) => [r.name, r.required])).toEqual([
      ['new._domainkey.acme.test', true],
    ]);
    expect(Object.keys(s.current().dnsStatuses).sort()).toEqual([
      'dkim:new._domainkey.acme.test',
      'dmarc:_dmarc.acme.test',
      'ownership:_mailer.acme.test',
      'spf:acme.test',
    ]);
    expect(s.current().dnsStatuses['dkim:new._domainkey.acme.test']?.status).toBe('verified');
  });
});

describe("a domain's inbound MX records", () => {
  it('are looked up and stored for each domain of its routes; a missing one flags nothing, and one gone with its route is dropped', async () => {
    const s = setup();
    s.publishAll();
    s.routed.push({ domainId: 'dom_1', domain: 'acme.test' }, { domainId: 'dom_1', domain: 'in.acme.test' });
    s.mx.set('in.acme.test', [{ exchange: 'mx.mailer.test', priority: 10 }]);
    const { records } = await s.checks.check(s.current());
    expect(records.filter((r) => r.purpose === 'inbound').map((r) => r.name)).toEqual(['acme.test', 'in.acme.test']);
    expect(s.current().dnsStatuses['inbound:in.acme.test']?.status).toBe('verified');
    expect(s.current().dnsStatuses['inbound:acme.test']?.status).toBe('pending');
    expect(s.current().dnsFailingSince).toBeNull();

    s.mx.delete('in.acme.test');
    await s.checks.check(s.current());
    expect(s.current().dnsStatuses['inbound:in.acme.test']?.status).toBe('failed');
    expect(s.current().dnsFailingSince).toBeNull();

    s.routed.splice(0);
    await s.checks.check(s.current());
    expect(Object.keys(s.current().dnsStatuses).filter((k) => k.startsWith('inbound:'))).toEqual([]);
  });
});

describe("a domain's DMARC finding", () => {
  const dmarcOf = (d: DomainRow) => d.dnsStatuses['dmarc:_dmarc.acme.test']?.dmarc;

  it("is stored with the DMARC record's status: none found, then the policy of the domain's own record", async () => {
    const s = setup();
    await s.checks.check(s.current());
    expect(dmarcOf(s.current())).toEqual({ published: false, policy: null, recordName: null });
    s.txt.set('_dmarc.acme.test', ['v=DMARC1; p=reject']);
    await s.checks.check(s.current());
    expect(dmarcOf(s.current())).toEqual({ published: true, policy: 'reject', recordName: '_dmarc.acme.test' });
    expect(s.current().dnsStatuses['dmarc:_dmarc.acme.test']?.status).toBe('verified');
  });

  it('keeps the last finding when a lookup fails', async () => {
    const s = setup();
    s.txt.set('_dmarc.acme.test', ['v=DMARC1; p=quarantine']);
    await s.checks.check(s.current());
    s.broken.add('_dmarc.acme.test');
    await s.checks.check(s.current());
    expect(dmarcOf(s.current())).toMatchObject({ published: true, policy: 'quarantine' });
  });
});
