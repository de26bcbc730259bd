import dns2 from 'dns2';
import { freePort } from './ports.js';

/**
 * A real DNS server on loopback (UDP and TCP on one port) answering from a zone the test edits: what
 * MAILER_DNS_SERVERS points at when domain verification is tested. A name not in the zone is NXDOMAIN; a
 * name in `failing` is SERVFAIL (a resolver failure, not an absence).
 */
export interface ZoneServer {
  /** `127.0.0.1:<port>`, as MAILER_DNS_SERVERS takes it. */
  address: string;
  txt(name: string, ...values: string[]): void;
  mx(name: string, ...values: { exchange: string; priority: number }[]): void;
  /** Removes the records of that type (every type when none is given) at the name. */
  remove(name: string, type?: 'TXT' | 'MX'): void;
  failing: Set<string>;
  close(): Promise<void>;
}

const { Packet } = dns2;

/** A TXT value as character-strings of at most 255 octets (RFC 1035 3.3.14): DKIM keys are longer. */
const chunks = (value: string) => value.match(/[\s\S]{1,255}/g) ?? [''];

export async function startZoneServer(): Promise<ZoneServer> {
  const zone = new Map<string, { TXT: string[]; MX: { exchange: string; priority: number }[] }>();
  const failing = new Set<string>();
  const at = (name: string) => {
    const key = name.toLowerCase().replace(/\.$/, '');
    let entry = zone.get(key);
    if (!entry) zone.set(key, (entry = { TXT: [], MX: [] }));
    return entry;
  };
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = (question?.name ?? '').toLowerCase().replace(/\.$/, '');
      const entry = zone.get(name);
      if (failing.has(name)) response.header.rcode = Packet.RCODE.SERVFAIL;
      else if (!entry || (entry.TXT.length === 0 && entry.MX.length === 0)) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else if (question?.type === Packet.TYPE.TXT) {
        for (const value of entry.TXT) response.answers.push({ name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: chunks(value) } as never);
      } else if (question?.type === Packet.TYPE.MX) {
        for (const mx of entry.MX) response.answers.push({ name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 1, ...mx } as never);
      }
      void send(response);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
  return {
    address: `127.0.0.1:${port}`,
    txt: (name, ...values) => { at(name).TXT.push(...values); },
    mx: (name, ...values) => { at(name).MX.push(...values); },
    remove: (name, type) => {
      const entry = at(name);
      if (type !== 'MX') entry.TXT = [];
      if (type !== 'TXT') entry.MX = [];
    },
    failing,
    close: () => server.close(),
  };
}
