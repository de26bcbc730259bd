/**
 * The world outside the service for the deliverability tests: a DNS server both the service and the
 * receiving side ask, MX hosts of recipient domains, and a stack pointed at them (CONTRACT.md, "Delivery,
 * authentication and reports"). Sender domains are set up as their owner would: add the domain through
 * the management API, publish what its `dns_records` say, ask for verification.
 */
import { afterAll, expect } from 'vitest';
import { admin } from './admin-fixtures.js';
import { startDnsServer, type DnsServer, type MxValue } from './dns-server.js';
import { call, eventually } from './http.js';
import { verifyAsReceiver, type ReceiverVerdict } from './mail-verifier.js';
import { startMxHosts, type MxHosts, type MxMessage } from './mx-hosts.js';
import type { Stack } from './stack.js';
import { useStack } from './use-stack.js';

/** The service's name (EHLO, SPF `a:`, return-path MX); the test DNS gives it the address the service sends from. */
export const MAILER_HOSTNAME = 'mail.mailer.test';
export const MAILER_ADDRESS = '127.0.0.1';
/** The DMARC policy a strict sender publishes: a receiver refuses what fails. */
export const STRICT_DMARC = 'v=DMARC1; p=reject';

export interface MailWorld {
  stack: Stack;
  dns: DnsServer;
  mx: MxHosts;
}

/**
 * A stack delivering `direct` to the recipients' MX hosts (here: the MX sinks, on loopback, one port) or
 * by `relay` through the stack's own sink, with the DNS server and MX hosts for the tests of a file.
 */
export function useMailWorld(mode: 'direct' | 'relay', env: Record<string, string> = {}): MailWorld {
  let dns: DnsServer | undefined;
  let mx: MxHosts | undefined;
  // Registered before the stack's own hook, so it runs after the stack has stopped (after hooks run in reverse).
  afterAll(async () => {
    await mx?.close();
    await dns?.close();
  });
  const stack = useStack(async () => {
    dns = await startDnsServer();
    mx = await startMxHosts(3);
    dns.set(MAILER_HOSTNAME, 'A', [MAILER_ADDRESS]);
    const common = { MAILER_DNS_SERVERS: dns.servers, MAILER_HOSTNAME, ...env };
    if (mode === 'relay') return common;
    return {
      MAILER_DELIVERY: 'direct',
      MAILER_MX_PORT: String(mx.port),
      MAILER_MX_ALLOW_PRIVATE: '1',
      MAILER_SMTP_RETRY_FIRST_SECONDS: '1',
      ...common,
    };
  });
  const started = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`the ${what} is not started yet`);
    return value;
  };
  return {
    stack,
    get dns() {
      return started('DNS server', dns);
    },
    get mx() {
      return started('MX hosts', mx);
    },
  };
}

export interface DnsRecordView {
  type: string;
  name: string;
  value: string;
  purpose: string;
  status: string;
}

export interface DomainView {
  id: string;
  name: string;
  verified: boolean;
  dns_records: DnsRecordView[];
  [field: string]: unknown;
}

/** Publishes records as the API lists them (`MX` values are `<preference> <host>`); `dmarc` replaces the advisory DMARC value. */
export function publishRecords(dns: DnsServer, records: DnsRecordView[], options: { dmarc?: string } = {}): void {
  const grouped = new Map<string, { name: string; type: 'TXT' | 'MX'; values: (string | MxValue)[] }>();
  for (const r of records) {
    if (r.type !== 'TXT' && r.type !== 'MX') throw new Error(`a record type the tests do not publish: ${r.type}`);
    const value = r.purpose === 'dmarc' && options.dmarc ? options.dmarc : r.value;
    const key = `${r.name.toLowerCase()} ${r.type}`;
    const entry = grouped.get(key) ?? { name: r.name, type: r.type, values: [] };
    if (r.type === 'MX') {
      const m = /^(\d+)\s+(\S+?)\.?$/.exec(value.trim());
      if (!m) throw new Error(`not an MX value: ${value}`);
      entry.values.push({ priority: Number(m[1]), exchange: m[2]! });
    } else {
      entry.values.push(value);
    }
    grouped.set(key, entry);
  }
  for (const { name, type, values } of grouped.values()) {
    if (type === 'MX') dns.set(name, 'MX', values as MxValue[]);
    else dns.set(name, 'TXT', values as string[]);
  }
}

/** Adds a sender domain to the stack's default account, publishes its records and verifies it through DNS. */
export async function setUpSenderDomain(
  world: MailWorld,
  name: string,
  options: { dmarc?: string } = { dmarc: STRICT_DMARC },
): Promise<DomainView> {
  const created = await admin<DomainView>(world.stack, 'POST', `/accounts/${world.stack.accountId}/domains`, { name });
  publishRecords(world.dns, created.body.dns_records, options);
  const verified = await admin<DomainView>(world.stack, 'POST', `/domains/${created.body.id}/verify`, {});
  expect(verified.body.verified, JSON.stringify(verified.body.dns_records)).toBe(true);
  return verified.body;
}

/** The record of a domain with `purpose`, failing the test when there is none. */
export function recordOf(domain: DomainView, purpose: string): DnsRecordView {
  const found = domain.dns_records.find((r) => r.purpose === purpose);
  if (!found) throw new Error(`no ${purpose} record in ${JSON.stringify(domain.dns_records)}`);
  return found;
}

/** Points `domain`'s MX records at MX hosts, `mx<N>.<domain>` having each host's address. */
export function publishMx(dns: DnsServer, domain: string, hosts: { ip: string; priority: number }[]): void {
  dns.set(
    domain,
    'MX',
    hosts.map((h, i) => ({ exchange: `mx${i + 1}.${domain}`, priority: h.priority })),
  );
  hosts.forEach((h, i) => dns.set(`mx${i + 1}.${domain}`, 'A', [h.ip]));
}

/** Sends an email with the default account's key; answers its id. */
export async function sendEmail(
  stack: Stack,
  body: { from: string; to: string[]; subject?: string; text?: string; [field: string]: unknown },
): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: { subject: 'Deliverability', text: 'Hello from the deliverability tests.', ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

export interface EmailDetail {
  email: { id: string; status: string; [field: string]: unknown };
  events: { type: string; data: Record<string, unknown> }[];
}

/** The email with its events (management API). */
export const detailOf = async (stack: Stack, id: string) =>
  (await admin<EmailDetail>(stack, 'GET', `/emails/${id}`)).body;

/** Waits until the email's status is one of `statuses` (a loaded machine and retries take time: 45 s by default). */
export function waitForStatus(stack: Stack, id: string, statuses: string[], timeoutMs = 45_000): Promise<EmailDetail> {
  return eventually(
    async () => {
      const detail = await detailOf(stack, id);
      return statuses.includes(detail.email.status) ? detail : undefined;
    },
    timeoutMs,
    200,
  );
}

/** The envelope sender of `domain`'s mail: `b-<email id>-<mac>@rp.<domain>` (VERP, return-path.ts). */
export const verpPattern = (domain: string) =>
  new RegExp(`^b-[a-z0-9_]+\\.\\d{1,2}-[a-z2-7]+@rp\\.${domain.replace(/\./g, '\\.')}$`);

/** The verdict of a receiver that got `message` at an MX host: its client address, EHLO name and envelope sender. */
export function receiverVerdict(world: Pick<MailWorld, 'dns'>, message: MxMessage): Promise<ReceiverVerdict> {
  return verifyAsReceiver(message.raw, {
    ip: message.remoteAddress,
    helo: message.helo,
    mailFrom: message.envelopeFrom,
    dns: world.dns,
  });
}

/** The message for `recipient` as the MX hosts received it. */
export const arrivalFor = (world: MailWorld, recipient: string, timeoutMs?: number) =>
  world.mx.waitForMessage((m) => m.envelopeTo.some((t) => t.toLowerCase() === recipient.toLowerCase()), timeoutMs);

/**
 * The receiver found a valid signature of `domain`, and no signature that fails (the contract asks for the
 * sender domain's signature; another valid one, e.g. of the service's own domain, would not hurt).
 */
export function expectDkimPass(verdict: ReceiverVerdict, domain: string): void {
  const summary = verdict.dkim.map((d) => `${d.status} d=${d.domain} s=${d.selector}`).join('; ');
  expect(
    verdict.dkim.some((d) => d.status === 'pass' && d.domain === domain),
    `${summary}\n${verdict.headers}`,
  ).toBe(true);
  expect(
    verdict.dkim.filter((d) => d.status !== 'pass'),
    `${summary}\n${verdict.headers}`,
  ).toEqual([]);
}

/** DKIM, SPF and DMARC all pass for mail of `domain` sent through its return path `rp.<domain>`. */
export function expectAllPass(verdict: ReceiverVerdict, domain: string): void {
  expectDkimPass(verdict, domain);
  expect(verdict.spf, verdict.headers).toEqual({ status: 'pass', domain: `rp.${domain}` });
  expect(verdict.dmarc, verdict.headers).toMatchObject({ status: 'pass', domain });
}
