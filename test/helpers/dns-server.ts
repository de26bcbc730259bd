/**
 * A real DNS server (dns2) on 127.0.0.1, UDP and TCP on one port, answering from a zone the test changes
 * as it goes: what the service under test (MAILER_DNS_SERVERS) and the receiving side's verifier
 * (mail-verifier.ts) look up. Answers are authoritative and uncached, so a change is seen at once.
 */
import dns2 from 'dns2';
import { freePort } from './ports.js';

const { Packet } = dns2;

export type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME';

export interface MxValue {
  exchange: string;
  priority: number;
}

/**
 * One TXT record: a value, served as character strings of 255 bytes as a DNS operator's tools split it, or the
 * character strings themselves, served exactly as given (a zone file's `"..." "..."`).
 */
export type TxtValue = string | readonly string[];

/** The values of one name and type: addresses or a name (A, AAAA, CNAME), MX records, TXT records. */
export type RecordValues<T extends RecordType> = T extends 'MX' ? MxValue[] : T extends 'TXT' ? TxtValue[] : string[];

export interface DnsServer {
  /** For MAILER_DNS_SERVERS and node's Resolver#setServers: `127.0.0.1:<port>`. */
  servers: string;
  port: number;
  /** Replaces the records of `name` and `type` (an empty list leaves the name known, without that type). */
  set<T extends RecordType>(name: string, type: T, values: RecordValues<T>): void;
  /** Publishes a null MX (`0 .`, RFC 7505): the domain accepts no mail. */
  setNullMx(name: string): void;
  /** Removes one type of a name, or the whole name (then NXDOMAIN). */
  remove(name: string, type?: RecordType): void;
  /** Every question asked so far, as `<name> <type>`. */
  queries: string[];
  /** Names answered SERVFAIL, whatever the zone holds: a resolver failure, not an absence. */
  failing: Set<string>;
  /** The TTL (seconds) answers of `<name> <type>` carry, e.g. `mx.test MX` -> 300; 1 when not set. */
  ttls: Map<string, number>;
  close(): Promise<void>;
}

const TYPE_CODES: Record<RecordType, number> = {
  A: Packet.TYPE.A,
  AAAA: Packet.TYPE.AAAA,
  MX: Packet.TYPE.MX,
  TXT: Packet.TYPE.TXT,
  CNAME: Packet.TYPE.CNAME,
};
const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([name, code]) => [code as number, name]));
const TTL = 1;
/** A character-string holds at most 255 bytes (RFC 1035 3.3); longer TXT values travel as several. */
const MAX_CHARACTER_STRING = 255;

const normalize = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** A TXT value as character strings of at most 255 bytes, as a DNS operator's tools publish a long DKIM key. */
export function splitTxt(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length === 0) return [bytes];
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += MAX_CHARACTER_STRING) chunks.push(bytes.subarray(i, i + MAX_CHARACTER_STRING));
  return chunks;
}

type Zone = Map<string, Map<RecordType, unknown[]>>;

/** The resource records of one name and type, in dns2's shape. */
function answersFor(name: string, type: RecordType, values: unknown[], ttls?: Map<string, number>): object[] {
  const base = {
    name,
    type: TYPE_CODES[type],
    class: Packet.CLASS.IN,
    ttl: ttls?.get(`${normalize(name)} ${type}`) ?? TTL,
  };
  return values.map((v) => {
    if (type === 'MX') return { ...base, exchange: (v as MxValue).exchange, priority: (v as MxValue).priority };
    if (type === 'TXT') {
      const txt = v as TxtValue;
      return { ...base, data: typeof txt === 'string' ? splitTxt(txt) : txt.map((c) => Buffer.from(c, 'utf8')) };
    }
    if (type === 'CNAME') return { ...base, domain: v as string };
    return { ...base, address: v as string };
  });
}

/** Answers one question from the zone, following a CNAME (one step) the way a resolver would. */
function answer(zone: Zone, request: dns2.Packet, ttls?: Map<string, number>): dns2.Packet {
  const response = Packet.createResponseFromRequest(request);
  response.header.aa = 1;
  const question = request.questions[0];
  if (!question) return response;
  const name = normalize(question.name);
  const records = zone.get(name);
  if (!records) {
    response.header.rcode = Packet.RCODE.NXDOMAIN;
    return response;
  }
  const wanted = [...records.keys()].find((t) => TYPE_CODES[t] === question.type);
  if (wanted) {
    response.answers.push(...(answersFor(question.name, wanted, records.get(wanted)!, ttls) as dns2.Packet.Resource[]));
    return response;
  }
  const cname = records.get('CNAME')?.[0] as string | undefined;
  if (cname) {
    response.answers.push(...(answersFor(question.name, 'CNAME', [cname], ttls) as dns2.Packet.Resource[]));
    const target = zone.get(normalize(cname));
    const targetType = target && [...target.keys()].find((t) => TYPE_CODES[t] === question.type);
    if (target && targetType)
      response.answers.push(
        ...(answersFor(cname, targetType, target.get(targetType)!, ttls) as dns2.Packet.Resource[]),
      );
  }
  return response;
}

function serverFailure(request: dns2.Packet): dns2.Packet {
  const response = Packet.createResponseFromRequest(request);
  response.header.rcode = Packet.RCODE.SERVFAIL;
  return response;
}

/** Binds UDP and TCP to one port free a moment ago; rejects (after closing) when either socket cannot have it. */
async function listenOnOnePort(server: dns2.DnsServer): Promise<number> {
  const port = await freePort();
  const failed = new Promise<Error>((resolve) => server.once('error', (err: Error) => resolve(err)));
  const outcome = await Promise.race([
    server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } }).then(() => undefined),
    failed,
  ]);
  if (outcome === undefined) return port;
  await Promise.race([server.close(), new Promise((r) => setTimeout(r, 500))]);
  throw outcome;
}

/** Starts a DNS server with an empty zone. */
export async function startDnsServer(): Promise<DnsServer> {
  const zone: Zone = new Map();
  const queries: string[] = [];
  const failing = new Set<string>();
  const ttls = new Map<string, number>();
  const handle: dns2.DnsHandler = (request, send) => {
    const q = request.questions[0];
    if (q) queries.push(`${normalize(q.name)} ${TYPE_NAMES.get(q.type) ?? q.type}`);
    send(q && failing.has(normalize(q.name)) ? serverFailure(request) : answer(zone, request, ttls)).catch(() => {});
  };

  // Another process may take the port between choosing and binding it (UDP and TCP are separate spaces),
  // and a dns2 server cannot listen again once a socket failed: a new server per attempt.
  let server: dns2.DnsServer | undefined;
  let port = 0;
  for (let attempt = 0; !server; attempt++) {
    const candidate = dns2.createServer({ udp: true, tcp: true, handle });
    try {
      port = await listenOnOnePort(candidate);
      server = candidate;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
  // A client that resets its TCP connection is not an error of the server.
  server.on('error', () => {});
  server.on('requestError', () => {});

  const recordsOf = (name: string) => {
    const key = normalize(name);
    let records = zone.get(key);
    if (!records) zone.set(key, (records = new Map()));
    return records;
  };
  const running = server;
  return {
    servers: `127.0.0.1:${port}`,
    port,
    queries,
    failing,
    ttls,
    set(name, type, values) {
      recordsOf(name).set(type, [...values]);
    },
    setNullMx(name) {
      recordsOf(name).set('MX', [{ exchange: '', priority: 0 }]);
    },
    remove(name, type) {
      const key = normalize(name);
      if (type === undefined) zone.delete(key);
      else zone.get(key)?.delete(type);
    },
    close: () => running.close().then(() => undefined),
  };
}
