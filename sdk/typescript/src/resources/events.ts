import type { MessageInitShape } from '@bufbuild/protobuf';
import {
  EmailService,
  type ListEventsRequestSchema,
  type ListEventsResponse,
  type MailEvent,
} from '../gen/mail/v1/email_service_pb.js';
import type { Call, RequestOptions } from '../transport.js';

const rpc = EmailService.method;

/** GET /events's query: after (a next_cursor), limit (1..1000, default 100), type, emailId. */
export type ListEventsInput = MessageInitShape<typeof ListEventsRequestSchema>;

export interface IterateOptions extends RequestOptions {
  /**
   * Keep polling once every event was read, for new ones, until `signal` aborts (which then ends the loop
   * quietly). Default false: the iteration ends at the last event there is.
   */
  follow?: boolean;
  /** Between polls when following and nothing new came. Default 2000 ms. */
  pollIntervalMs?: number;
}

const pause = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });

/** `mailer.events`: the account's events, oldest first, as webhooks send them, read from a cursor. */
export class Events {
  constructor(private readonly call: Call) {}

  /** One page (GET /events): pass its nextCursor as `after` to read what follows. */
  list(query: ListEventsInput = {}, options?: RequestOptions): Promise<ListEventsResponse> {
    return this.call(rpc.listEvents, query, 'safe', options);
  }

  /**
   * Every event from `query.after` (default: the first) on, page by page following next_cursor:
   * `for await (const event of mailer.events.iterate({ type: 'delivery' })) ...`.
   */
  async *iterate(query: ListEventsInput = {}, options: IterateOptions = {}): AsyncGenerator<MailEvent, void> {
    const { follow = false, pollIntervalMs = 2000, ...request } = options;
    let after = query.after ?? '';
    for (;;) {
      let page: ListEventsResponse;
      try {
        page = await this.list({ ...query, after }, request);
      } catch (err) {
        if (follow && request.signal?.aborted) return;
        throw err;
      }
      yield* page.events;
      if (page.events.length > 0) {
        after = page.nextCursor;
        continue;
      }
      if (!follow) return;
      await pause(pollIntervalMs, request.signal);
      if (request.signal?.aborted) return;
    }
  }
}
