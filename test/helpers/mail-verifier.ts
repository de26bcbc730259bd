/**
 * What a receiving mail system would conclude about a message: DKIM, SPF and DMARC as checked by mailauth
 * (an implementation independent of the service), looking everything up in the test DNS server.
 */
import { Resolver } from 'node:dns/promises';
import { authenticate, type DNSResolver } from 'mailauth';

/** The receiving side's name in Authentication-Results. */
export const VERIFIER_MTA = 'mx.receiver.test';

export interface DkimVerdict {
  status: string;
  /** d= of the signature. */
  domain: string;
  selector: string;
  /** Whether d= aligns with the From domain (relaxed), whether or not the signature verified. */
  aligned: boolean;
  comment?: string;
}

export interface ReceiverVerdict {
  dkim: DkimVerdict[];
  spf: { status: string; domain: string };
  dmarc: { status: string; policy: string; domain: string; alignment: { spf?: string; dkim?: string } };
  /** The Authentication-Results and Received-SPF headers the receiver would add, for failure messages. */
  headers: string;
}

export interface ReceiverContext {
  /** The SMTP client's address as the receiver saw it. */
  ip: string;
  /** The EHLO name the client gave. */
  helo: string;
  /** The envelope sender (MAIL FROM). */
  mailFrom: string;
  /** The DNS server to ask: `host:port` (the test DNS server's `servers`) or the server itself. */
  dns: string | { servers: string };
}

/** A mailauth resolver over node's resolver pointed at the test DNS server (answers and error codes as dns.promises gives them). */
export function testDnsResolver(dns: ReceiverContext['dns']): DNSResolver {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([typeof dns === 'string' ? dns : dns.servers]);
  return (name, rrtype) => resolver.resolve(name, rrtype) as ReturnType<DNSResolver>;
}

/** Checks `raw` as a receiving server would that got it from `ip` after `EHLO helo` and `MAIL FROM:<mailFrom>`. */
export async function verifyAsReceiver(raw: Buffer | string, context: ReceiverContext): Promise<ReceiverVerdict> {
  const result = await authenticate(raw, {
    ip: context.ip,
    helo: context.helo,
    sender: context.mailFrom,
    mta: VERIFIER_MTA,
    resolver: testDnsResolver(context.dns),
    disableArc: true,
    disableBimi: true,
  });
  const spf = result.spf || undefined;
  const dmarc = result.dmarc || undefined;
  return {
    dkim: result.dkim.results.map((r) => ({
      status: r.status.result,
      domain: r.signingDomain,
      selector: r.selector ?? '',
      aligned: Boolean(r.status.aligned),
      ...(r.status.comment ? { comment: String(r.status.comment) } : {}),
    })),
    spf: { status: spf?.status.result ?? 'none', domain: spf?.domain ?? '' },
    dmarc: {
      status: dmarc?.status.result ?? 'none',
      policy: dmarc?.policy ?? '',
      domain: dmarc?.domain ?? '',
      alignment: { spf: dmarc?.alignment?.spf?.result || undefined, dkim: dmarc?.alignment?.dkim?.result || undefined },
    },
    headers: result.headers,
  };
}
