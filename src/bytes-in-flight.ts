import { AppError } from './errors.js';

/**
 * Request bytes this process holds at once (REST and gRPC bodies, SMTP submission messages), counted in
 * total and per API key, each under its cap. Without this, one key could send dozens of 64 MiB batches at once,
 * and a few dozen would end the process. The process holds a small multiple of the bytes counted while it
 * parses them (docs/operations.md, "Request bytes in flight", has the figures).
 *
 * The two caps count differently, each what it protects against:
 * - The process counts what is in memory: bytes as they arrive (or a length the reader allocates whole), so a
 *   client that announces a large body and then trickles it holds only what it sent, and a few such clients
 *   cannot fill the cap for everyone. A declared length must fit at arrival all the same (nothing is taken then).
 * - A key counts each of its bodies at its declared length from arrival (at what arrived when it declares none),
 *   so a key sending many large bodies at once has all but what fits refused before they are uploaded, and a
 *   key that trickles holds only its own cap.
 * A body is counted until its answer is out or its connection closes.
 */

export interface BytesInFlightLimits {
  /** Bytes held by the whole process. */
  process: number;
  /** Bytes held for one API key; bodies without a key (admin calls, the console) count in the process total only. */
  perKey: number;
}

/** A refusal for bytes in flight is retried after this long: the bodies already held are being answered. */
export const BYTES_IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

const MiB = 1024 * 1024;
const mib = (n: number) => (n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`);

type Cap = 'process' | 'key';

export class BytesInFlight {
  #total = 0;
  readonly #byKey = new Map<string, number>();

  constructor(readonly limits: BytesInFlightLimits) {}

  /** Bytes counted now: in the process's total, or for one key. */
  held(key?: string): number {
    return key === undefined ? this.#total : (this.#byKey.get(key) ?? 0);
  }

  /** Which cap `keyBytes` more for `key` and `processBytes` more in all would pass; undefined when both fit. */
  refusal(key: string | undefined, keyBytes: number, processBytes: number): Cap | undefined {
    if (key !== undefined && keyBytes > 0 && this.held(key) + keyBytes > this.limits.perKey) return 'key';
    if (processBytes > 0 && this.#total + processBytes > this.limits.process) return 'process';
    return undefined;
  }

  /** Throws the 429 unless `n` more bytes (at least one) would fit now, for the key and in all; takes nothing. */
  assertRoom(key: string | undefined, n: number): void {
    const refused = this.refusal(key, Math.max(1, n), Math.max(1, n));
    if (refused) throw new BytesInFlightError(refused, this.limits);
  }

  /** A meter for one request's body, counted for `key` once it is known (meter.forKey). */
  meter(key?: string): BodyMeter {
    return new BodyMeter(this, key);
  }

  /** @internal Counts `keyBytes` more for `key` and `processBytes` more in all (BodyMeter checks refusal() first); negative gives back. */
  count(key: string | undefined, keyBytes: number, processBytes: number): void {
    this.#total += processBytes;
    if (key === undefined || keyBytes === 0) return;
    const left = this.held(key) + keyBytes;
    if (left > 0) this.#byKey.set(key, left);
    else this.#byKey.delete(key);
  }
}

/**
 * One body's bytes. `declare` takes a declared length for the key (and checks the process has room for it),
 * `allocate` takes a length for both (a reader that allocates it whole at once), `take` counts bytes as they
 * arrive beyond those; each throws the 429 when what it adds does not fit, adding nothing. `release` gives
 * everything back and may be called more than once (an answer and a closed connection both end a request).
 */
export class BodyMeter {
  #key: string | undefined;
  /** What the key is charged: the declared length, or more if more arrived. */
  #forKey = 0;
  /** What the process is charged: what arrived, or a length allocated whole. */
  #forProcess = 0;
  #arrived = 0;
  #released = false;

  constructor(
    private readonly budget: BytesInFlight,
    key?: string,
  ) {
    this.#key = key;
  }

  /** Whose bytes these are, once the caller is admitted; before any byte is counted. */
  forKey(key: string | undefined): this {
    if (this.#forKey > 0 || this.#forProcess > 0) throw new Error('BodyMeter.forKey after bytes were counted');
    this.#key = key;
    return this;
  }

  /** The bytes this body is counted for: for its key, and in the process's total. */
  get held(): { key: number; process: number } {
    return { key: this.#forKey, process: this.#forProcess };
  }

  /** A declared length, on arrival: taken for the key; the process must have room for it, but it counts arrivals. */
  declare(n: number): void {
    if (this.#released) return;
    const refused = this.budget.refusal(this.#key, n - this.#forKey, n - this.#forProcess);
    if (refused) throw new BytesInFlightError(refused, this.budget.limits);
    this.#grow(n, this.#forProcess);
  }

  /** A length the reader allocates whole before reading: taken for the key and in all. */
  allocate(n: number): void {
    this.#grow(n, n);
  }

  /** Counts `n` bytes that arrived. */
  take(n: number): void {
    this.#arrived += n;
    this.#grow(this.#arrived, this.#arrived);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.budget.count(this.#key, -this.#forKey, -this.#forProcess);
    this.#forKey = 0;
    this.#forProcess = 0;
  }

  /** Raises the counts to at least `forKey` and `forProcess`, or throws the 429 changing nothing. */
  #grow(forKey: number, forProcess: number): void {
    // A chunk that arrives after its request ended counts nothing: its release already ran.
    if (this.#released) return;
    const keyBytes = Math.max(0, forKey - this.#forKey);
    const processBytes = Math.max(0, forProcess - this.#forProcess);
    const refused = this.budget.refusal(this.#key, keyBytes, processBytes);
    if (refused) throw new BytesInFlightError(refused, this.budget.limits);
    this.budget.count(this.#key, keyBytes, processBytes);
    this.#forKey += keyBytes;
    this.#forProcess += processBytes;
  }
}

/**
 * 429 `too many requests` with Retry-After (gRPC RESOURCE_EXHAUSTED), naming the cap that was reached. Its own
 * class so that SMTP submission answers it 452 4.3.1 (insufficient system storage) rather than as a rate limit.
 */
export class BytesInFlightError extends AppError {
  constructor(
    readonly cap: 'process' | 'key',
    limits: BytesInFlightLimits,
  ) {
    super(
      'rate_limited',
      cap === 'key'
        ? `This API key already has ${mib(limits.perKey)} of request bodies in flight (the most it may); retry once earlier requests are answered`
        : `The server already holds ${mib(limits.process)} of request bodies in flight (the most it takes); retry shortly`,
      { retryAfterSeconds: BYTES_IN_FLIGHT_RETRY_AFTER_SECONDS },
    );
  }
}
