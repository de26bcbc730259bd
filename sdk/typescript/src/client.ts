import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import type { Transport } from '@connectrpc/connect';
import { connectInvoker, connectWebTransport } from './connect-transport.js';
import { Inbound } from './resources/inbound.js';
import { Batches, Emails, Scheduled } from './resources/emails.js';
import { Events } from './resources/events.js';
import { Suppressions } from './resources/suppressions.js';
import { Templates } from './resources/templates.js';
import { WebhookEndpoints } from './resources/webhooks.js';
import { restInvoker } from './rest-transport.js';
import { DEFAULT_RETRY, withRetries, type RetryOptions } from './retry.js';
import type { CallKind, Invoker, RequestOptions } from './transport.js';

export interface MailerOptions {
  /** The account's API key (`mk_...`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /**
   * The service's URL. REST (default): the REST port's origin, `http://127.0.0.1:8080` by default (the SDK adds
   * /v1/mail). Connect: the gRPC port's, `http://127.0.0.1:8081` by default.
   */
  baseUrl?: string;
  /**
   * `'rest'` (default): the REST API over fetch. `'connect'`: the Connect protocol over fetch
   * (@connectrpc/connect-web) to the gRPC port, which speaks HTTP/2 only: from a browser through a TLS proxy,
   * from Node with a `fetch` that speaks h2c (README). Or any connect-es Transport, such as
   * @connectrpc/connect-node's createGrpcTransport for gRPC proper (baseUrl is then the transport's).
   */
  transport?: 'rest' | 'connect' | Transport;
  /** Retries of failed calls (retry.ts): by default 2, with exponential backoff and jitter, honouring Retry-After. */
  retry?: RetryOptions;
  /** The fetch to use (REST and `'connect'`); default globalThis.fetch. */
  fetch?: typeof fetch;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
}

/** A fresh Idempotency-Key (crypto.randomUUID is in browsers, edge runtimes and Node 20 alike). */
const newIdempotencyKey = (): string => crypto.randomUUID();

/**
 * The client: `new Mailer({ apiKey, baseUrl })`, then `mailer.emails.send({...})`. Every method takes and returns
 * the proto's generated message types (camelCase fields), whichever transport carries them.
 */
export class Mailer {
  readonly emails: Emails;
  readonly scheduled: Scheduled;
  readonly batches: Batches;
  readonly templates: Templates;
  readonly suppressions: Suppressions;
  readonly inbound: Inbound;
  readonly events: Events;
  readonly webhooks: WebhookEndpoints;

  private readonly invoker: Invoker;
  private readonly retry: Required<RetryOptions>;

  constructor(private readonly options: MailerOptions) {
    if (!options.apiKey) throw new TypeError('Mailer: apiKey is required');
    // Looked up at each call, and called as a function of globalThis: a browser refuses a fetch detached from
    // window ("Illegal invocation"), and a fetch patched in later (tests, instrumentation) is the one used.
    const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const transport = options.transport ?? 'rest';
    if (transport === 'rest') this.invoker = restInvoker(options.baseUrl ?? 'http://127.0.0.1:8080', fetchFn);
    else if (transport === 'connect')
      this.invoker = connectInvoker(connectWebTransport(options.baseUrl ?? 'http://127.0.0.1:8081', fetchFn));
    else this.invoker = connectInvoker(transport);
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    const call = this.call.bind(this);
    this.emails = new Emails(call);
    this.scheduled = new Scheduled(call);
    this.batches = new Batches(call);
    this.templates = new Templates(call);
    this.suppressions = new Suppressions(call);
    this.inbound = new Inbound(call);
    this.events = new Events(call);
    this.webhooks = new WebhookEndpoints(call);
  }

  /**
   * One call with its retries: the same headers on every attempt, so a send's Idempotency-Key (the caller's, or
   * one made here) is the same on each and the service sends it once.
   */
  private call<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageInitShape<I>,
    kind: CallKind,
    options: RequestOptions = {},
  ): Promise<MessageShape<O>> {
    const message = create(method.input, input);
    const headers = new Headers({ ...this.options.headers, ...options.headers });
    headers.set('authorization', `Bearer ${this.options.apiKey}`);
    if (kind === 'send') headers.set('idempotency-key', options.idempotencyKey ?? newIdempotencyKey());
    return withRetries(
      // Each attempt its own copy: a transport may set headers of its own (content-type) on what it is given.
      () => this.invoker.unary(method, message, new Headers(headers), options.signal),
      this.retry,
      kind !== 'unsafe',
      options.signal,
    );
  }
}
