import type { DescMessage, DescMethodUnary, Message, MessageInitShape, MessageShape } from '@bufbuild/protobuf';

/**
 * One attempt of a unary call, as both transports make it: the request message out, the response message back,
 * or a MailerError (rest-transport.ts, connect-transport.ts). Retries, headers and idempotency keys are the
 * client's (client.ts), so that both transports behave the same.
 */
export interface Invoker {
  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageShape<I>,
    headers: Headers,
    signal: AbortSignal | undefined,
  ): Promise<MessageShape<O>>;
}

/** What a caller may add to any call. */
export interface RequestOptions {
  /**
   * The Idempotency-Key of a send (emails.send, emails.schedule, emails.batch): the same key within 24 hours
   * answers the first request's result instead of sending again. Default: a new key per call, reused by its
   * retries.
   */
  idempotencyKey?: string;
  /** Aborts the call and its retries, e.g. `AbortSignal.timeout(10_000)`. */
  signal?: AbortSignal;
  /** Extra request headers (X-Request-Id, for one). */
  headers?: Record<string, string>;
}

/**
 * How a call may be retried and whether it carries an Idempotency-Key (retry.ts isRetryable):
 * - `send`: a send (emails.send, schedule, batch): an Idempotency-Key, so any failure may be retried;
 * - `safe`: a read, a delete, or a write that leaves the same state however often it is made;
 * - `unsafe`: a create without a key, retried only when the service refused it before acting.
 */
export type CallKind = 'send' | 'safe' | 'unsafe';

/** A unary call through the client (headers, idempotency, retries), as the resources make them. */
export type Call = <I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  input: MessageInitShape<I>,
  kind: CallKind,
  options: RequestOptions | undefined,
) => Promise<MessageShape<O>>;

/** A request's fields as a method's last argument takes them: those given as its own arguments (an id) left out. */
export type InputWithout<S extends DescMessage, K extends string> = Omit<
  Exclude<MessageInitShape<S>, Message>,
  K | '$typeName'
>;
