import net from 'node:net';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { dkimVerify, dmarc, spf, type DKIMVerifyResult, type DNSResolver, type SPFResult } from 'mailauth';
import type { InboundAuthentication } from '../domain/entities/inbound.js';
import type { DnsResolver } from '../net/dns-resolver.js';

/** What checking one inbound message may cost (docs/inbound.md, "What a message becomes"). */
export const INBOUND_AUTH_LIMITS = {
  /** All checks together; what has not answered by then is `temperror`. */
  timeoutMs: 10_000,
  /** SPF's DNS lookups (RFC 7208 4.6.4: 10) and lookups that find nothing (4.6.4: 2); beyond, `permerror`. */
  spfLookups: 10,
  spfVoidLookups: 2,
  /** DKIM-Signature fields verified, the first ones: each may cost a DNS lookup and a hash of the whole body. */
  dkimSignatures: 10,
  /** The message's header block; a larger one (which the parse refuses too) is not checked: `permerror`. */
  headBytes: 1024 * 1024,
} as const;

export interface InboundEnvelope {
  /** The SMTP client's address (an IPv4-mapped IPv6 address is read as the IPv4 one). */
  remoteAddress: string;
  /** The name the client gave in EHLO/HELO. */
  helo: string;
  /** MAIL FROM's address; '' for the null sender (then SPF checks the HELO name, RFC 7208 2.4). */
  mailFrom: string;
}

/**
 * mailauth's resolver over the service's (MAILER_DNS_SERVERS), as feedback-sources.ts uses it, with absence as
 * mailauth expects it: a thrown ENODATA, which SPF counts as a void lookup. The service's resolver asks no PTR
 * records, so SPF's `ptr` mechanism (which RFC 7208 5.5 says not to use) matches nothing and `%{p}` reads
 * "unknown".
 */
export function mailauthResolver(resolver: DnsResolver): DNSResolver {
  const absent = (name: string, rrtype: string) =>
    Object.assign(new Error(`query${rrtype} ENODATA ${name}`), { code: 'ENODATA' });
  const lookup = async (name: string, rrtype: string): Promise<unknown[]> => {
    let answer: unknown[];
    if (rrtype === 'TXT') answer = (await resolver.resolveTxt(name)).map((txt) => [txt]);
    else if (rrtype === 'A') answer = await resolver.resolve4(name);
    else if (rrtype === 'AAAA') answer = await resolver.resolve6(name);
    else if (rrtype === 'MX') answer = await resolver.resolveMx(name);
    else throw absent(name, rrtype);
    if (answer.length === 0) throw absent(name, rrtype);
    return answer;
  };
  // MX answers are node's {exchange, priority} records, which mailauth reads though its type says strings.
  return lookup as DNSResolver;
}

/**
 * SPF (of the connecting address and MAIL FROM, or HELO for the null sender), DKIM and DMARC of a message as it
 * arrived, with mailauth: its dkimVerify, spf and dmarc, what its authenticate() runs with ARC and BIMI off,
 * called one by one so that SPF, which needs no byte of the message, runs while DKIM reads it, and so that a
 * check that answered before the deadline keeps its result when another runs out of time.
 *
 * Each result is mailauth's (pass, fail, softfail, neutral, none, temperror, permerror, policy), but for
 * - dkim: `pass` when any signature passes, else the first signature's result, `none` when unsigned; a body
 *   hash that does not match is `fail` (mailauth says `neutral`; RFC 6376 6.1.3 and RFC 8601 2.7.1 make it a
 *   failed verification, the usual mark of a message altered after signing);
 * - dmarc: `none` without a single From address; `temperror` rather than `fail` when SPF ran out of time.
 * Never rejects: a check that throws or does not answer within INBOUND_AUTH_LIMITS.timeoutMs is `temperror`
 * (the message is then no longer read).
 */
export async function authenticateInbound(
  source: Readable | Buffer,
  envelope: InboundEnvelope,
  resolver: DNSResolver,
  options: { timeoutMs?: number } = {},
): Promise<InboundAuthentication> {
  const message = limitSignatures(source);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), options.timeoutMs ?? INBOUND_AUTH_LIMITS.timeoutMs);
  });
  const within = <T>(work: Promise<T>): Promise<T | typeof TIMED_OUT | typeof FAILED> =>
    Promise.race([work.catch((): typeof FAILED => FAILED), deadline]);

  try {
    const ip = envelope.remoteAddress;
    // As authenticate() does: a missing HELO name is the address, an address is written as a literal.
    const helo = envelope.helo || ip;
    const spfWork = within(
      spf({
        ip,
        helo: net.isIP(helo) ? `[${helo}]` : helo,
        sender: envelope.mailFrom || undefined,
        resolver,
        maxResolveCount: INBOUND_AUTH_LIMITS.spfLookups,
        maxVoidCount: INBOUND_AUTH_LIMITS.spfVoidLookups,
      }),
    );
    const dkimWork = within(dkimVerify(message, { resolver, sender: envelope.mailFrom || undefined }));
    const [spfResult, dkimResult] = await Promise.all([spfWork, dkimWork]);

    // A check that gave up leaves the message unread: stop reading it.
    if (typeof dkimResult === 'symbol') message.destroy(new Error('DKIM verification did not finish'));
    const spfStatus = typeof spfResult === 'symbol' ? 'temperror' : spfResult.status.result;
    if (message.headTooLarge) return { spf: spfStatus, dkim: 'permerror', dmarc: 'permerror' };
    if (typeof dkimResult === 'symbol') return { spf: spfStatus, dkim: 'temperror', dmarc: 'temperror' };
    const dmarcStatus = await dmarcOf(dkimResult, spfResult, resolver, within);
    return {
      spf: spfStatus,
      dkim: dkimStatus(dkimResult),
      dmarc: dmarcStatus === 'fail' && spfResult === TIMED_OUT ? 'temperror' : dmarcStatus,
    };
  } finally {
    clearTimeout(timer);
  }
}

const TIMED_OUT = Symbol('timed out');
const FAILED = Symbol('failed');

function dkimStatus(result: DKIMVerifyResult): string {
  const signatures = result.results;
  if (signatures.some((r) => r.status.result === 'pass')) return 'pass';
  const first = signatures[0];
  if (!first) return 'none';
  if (first.status.result === 'neutral' && first.status.comment === 'body hash did not verify') return 'fail';
  return first.status.result;
}

async function dmarcOf(
  dkimResult: DKIMVerifyResult,
  spfResult: SPFResult | symbol,
  resolver: DNSResolver,
  within: <T>(work: Promise<T>) => Promise<T | symbol>,
): Promise<string> {
  // mailauth answers no DMARC result for a message without exactly one From address.
  if (dkimResult.headerFrom.length !== 1) return 'none';
  const spfPass = typeof spfResult !== 'symbol' && spfResult.status.result === 'pass';
  const result = await within(
    dmarc({
      headerFrom: dkimResult.headerFrom,
      spfDomains: spfPass ? [spfResult.domain] : [],
      dkimDomains: dkimResult.results
        .filter((r) => r.status.result === 'pass')
        .map((r) => ({
          id: r.id,
          domain: r.signingDomain,
          aligned: r.status.aligned,
          underSized: r.status.underSized,
        })),
      resolver,
    }),
  );
  if (typeof result === 'symbol') return 'temperror';
  return result ? result.status.result : 'none';
}

/** The message as mailauth reads it: in chunks, its header block holding at most `dkimSignatures` signatures. */
type CheckedMessage = Readable & { headTooLarge: boolean };

function limitSignatures(source: Readable | Buffer): CheckedMessage {
  const filter = new SignatureLimit();
  const input = Buffer.isBuffer(source) ? Readable.from(chunksOf(source)) : source;
  input.on('error', (err) => filter.destroy(err));
  filter.on('close', () => {
    if (!input.readableEnded) input.destroy();
  });
  input.pipe(filter);
  return filter;
}

/** A buffer in 64 KiB views (no copy), so that reading it yields to other work between them. */
function* chunksOf(buffer: Buffer): Generator<Buffer> {
  for (let at = 0; at < buffer.length; at += 65536) yield buffer.subarray(at, at + 65536);
}

/**
 * Passes a message through, but for the DKIM-Signature fields of its header block beyond the first
 * `dkimSignatures` (dropped), and ends it empty, with `headTooLarge`, when the header block is over
 * `headBytes`: each signature makes mailauth hash the body once more and may make it look up a key, both
 * chosen by the sender. The header block is held until its end (mailauth holds it too); the body streams.
 */
class SignatureLimit extends Transform {
  headTooLarge = false;
  private head: Buffer[] = [];
  private headLength = 0;
  /** The last bytes of the head read so far, for a blank line split across chunks. */
  private carry = Buffer.alloc(0);
  private passing = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.passing) return done(null, chunk);
    if (this.headTooLarge) return done();
    const window = Buffer.concat([this.carry, chunk]);
    const end = headEnd(window, this.headLength === 0);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (end >= 0) {
      const all = Buffer.concat(this.head);
      const at = this.headLength - window.length + end;
      this.head = [];
      this.passing = true;
      this.push(keepSignatures(all.subarray(0, at)));
      return done(null, all.subarray(at));
    }
    if (this.headLength > INBOUND_AUTH_LIMITS.headBytes) {
      this.headTooLarge = true;
      this.head = [];
      return done();
    }
    this.carry = window.subarray(Math.max(0, window.length - 2));
    done();
  }

  override _flush(done: TransformCallback): void {
    // A message of headers only.
    if (!this.passing && !this.headTooLarge && this.headLength > 0) this.push(keepSignatures(Buffer.concat(this.head)));
    done();
  }
}

/** Where the header block ends (just past its blank line), or -1; `atStart` when `bytes` begins the message. */
function headEnd(bytes: Buffer, atStart: boolean): number {
  // A message without header fields starts with its blank line.
  if (atStart && bytes[0] === 0x0a) return 1;
  if (atStart && bytes[0] === 0x0d && bytes[1] === 0x0a) return 2;
  const lf = bytes.indexOf('\n\n');
  const crlf = bytes.indexOf('\n\r\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf + 3;
  return lf >= 0 ? lf + 2 : -1;
}

/** The header block with its DKIM-Signature fields beyond the first few left out (unchanged when there are no more). */
function keepSignatures(head: Buffer): Buffer {
  const text = head.toString('latin1');
  const lines = text.split('\n');
  let signatures = 0;
  let dropping = false;
  let dropped = false;
  const kept: string[] = [];
  for (const line of lines) {
    const continuation = line.startsWith(' ') || line.startsWith('\t');
    if (!continuation) {
      dropping = /^dkim-signature[ \t]*:/i.test(line) && ++signatures > INBOUND_AUTH_LIMITS.dkimSignatures;
      dropped ||= dropping;
    }
    if (!dropping) kept.push(line);
  }
  return dropped ? Buffer.from(kept.join('\n'), 'latin1') : head;
}
