import type { InboundEmail, ListInboundEmailsResponse } from '../../src/gen/mail/v1/inbound_pb.js';

/** One page of the inbox, newest first (Inbox.list). */
export type ListPage = (req: { page: number; pageSize: number }) => Promise<ListInboundEmailsResponse>;

export interface FollowOptions {
  /** Messages a page (the API takes up to 100). */
  pageSize?: number;
  /** Pages read at most in one poll: a burst larger than this many pages is printed in part (the newest). */
  maxPages?: number;
  /**
   * How far before the newest message seen a newly visible one may still have been received. A message's
   * received_at is when it arrived, not when its row became visible (a large one is stored first), so it can
   * appear in the list below messages already printed; within this window it is printed all the same.
   */
  windowMs?: number;
}

/**
 * Follows an inbox by polling its list (newest first): each poll answers the messages not answered before,
 * oldest first. Both APIs (the account's and the operator's) have the list, so `inbound tail` follows either the
 * same way. Ids answered are remembered while they are inside the window, so none is answered twice.
 */
export class InboxFollower {
  private readonly pageSize: number;
  private readonly maxPages: number;
  private readonly windowMs: number;
  /** id → received_at (ms) of the messages answered or passed over, inside the window. */
  private readonly seen = new Map<string, number>();
  /** Messages received before this (ms) are not looked for any more; -Infinity until one is seen. */
  private horizon = Number.NEGATIVE_INFINITY;
  private started = false;

  constructor(
    private readonly list: ListPage,
    options: FollowOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 100;
    this.maxPages = options.maxPages ?? 10;
    this.windowMs = options.windowMs ?? 10 * 60_000;
  }

  /**
   * The first call answers the newest `last` messages (oldest first; up to a page) and passes over the others of
   * the window; every later call answers what became visible since.
   */
  async poll(last = 0): Promise<InboundEmail[]> {
    const unseen: InboundEmail[] = [];
    let firstPage: InboundEmail[] = [];
    for (let page = 1; page <= this.maxPages; page += 1) {
      const { inboundEmails } = await this.list({ page, pageSize: this.pageSize });
      if (page === 1) firstPage = inboundEmails;
      // The window starts from the newest message there is when following starts.
      const newest = inboundEmails[0];
      if (!this.started && page === 1 && newest) this.horizon = Date.parse(newest.receivedAt) - this.windowMs;
      let passedHorizon = false;
      for (const m of inboundEmails) {
        if (Date.parse(m.receivedAt) < this.horizon) {
          passedHorizon = true;
          break;
        }
        if (!this.seen.has(m.id)) unseen.push(m);
      }
      if (passedHorizon || inboundEmails.length < this.pageSize) break;
    }
    for (const m of unseen) this.remember(m);
    const fresh = this.started ? unseen : firstPage.slice(0, last);
    this.started = true;
    this.forgetOld();
    return fresh.reverse();
  }

  private remember(m: InboundEmail): void {
    const at = Date.parse(m.receivedAt);
    this.seen.set(m.id, at);
    this.horizon = Math.max(this.horizon, at - this.windowMs);
  }

  private forgetOld(): void {
    for (const [id, at] of this.seen) if (at < this.horizon) this.seen.delete(id);
  }
}
