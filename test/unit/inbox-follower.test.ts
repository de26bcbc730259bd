import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { InboxFollower } from '../../cli/lib/inbox-follower.js';
import {
  InboundEmailSchema,
  ListInboundEmailsResponseSchema,
  type InboundEmail,
} from '../../src/gen/mail/v1/inbound_pb.js';

/**
 * `mailer inbound tail`'s follower over an inbox that is a plain array (the list's seam): newest first and paged
 * as the API pages it, so what a poll answers can be checked message by message.
 */
function inbox() {
  const messages: InboundEmail[] = [];
  let reads = 0;
  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, second)).toISOString();
  return {
    /** A message received at second `second` of the test's minute (not necessarily after the others). */
    receive(id: string, second: number) {
      messages.push(create(InboundEmailSchema, { id, receivedAt: at(second) }));
    },
    list: async ({ page, pageSize }: { page: number; pageSize: number }) => {
      reads += 1;
      const sorted = [...messages].sort((a, b) => b.receivedAt.localeCompare(a.receivedAt) || b.id.localeCompare(a.id));
      return create(ListInboundEmailsResponseSchema, {
        inboundEmails: sorted.slice((page - 1) * pageSize, page * pageSize),
        total: sorted.length,
      });
    },
    reads: () => reads,
  };
}

const ids = (messages: InboundEmail[]) => messages.map((m) => m.id);

describe('InboxFollower', () => {
  it('answers the newest `last` first, then each new message once, oldest first', async () => {
    const box = inbox();
    for (let i = 1; i <= 5; i += 1) box.receive(`in_${i}`, i);
    const follower = new InboxFollower(box.list, { pageSize: 2 });
    expect(ids(await follower.poll(2))).toEqual(['in_4', 'in_5']);
    expect(ids(await follower.poll())).toEqual([]);
    box.receive('in_6', 6);
    box.receive('in_7', 7);
    box.receive('in_8', 8);
    expect(ids(await follower.poll())).toEqual(['in_6', 'in_7', 'in_8']);
    expect(ids(await follower.poll())).toEqual([]);
  });

  it('answers nothing of what was there before it started, with last 0', async () => {
    const box = inbox();
    for (let i = 1; i <= 7; i += 1) box.receive(`in_${i}`, i);
    const follower = new InboxFollower(box.list, { pageSize: 3 });
    expect(ids(await follower.poll())).toEqual([]);
    expect(ids(await follower.poll())).toEqual([]);
  });

  it('answers a message that became visible below ones already answered, inside the window', async () => {
    const box = inbox();
    box.receive('in_a', 10);
    const follower = new InboxFollower(box.list, { pageSize: 2, windowMs: 30_000 });
    expect(ids(await follower.poll())).toEqual([]);
    box.receive('in_c', 40);
    expect(ids(await follower.poll())).toEqual(['in_c']);
    // Received at second 20 (a large message, stored first), listed only now: below in_c, inside the window.
    box.receive('in_b', 20);
    expect(ids(await follower.poll())).toEqual(['in_b']);
    expect(ids(await follower.poll())).toEqual([]);
  });

  it('stops reading pages at the window, and at maxPages', async () => {
    const box = inbox();
    for (let i = 0; i < 40; i += 1) box.receive(`in_${String(i).padStart(2, '0')}`, i);
    const windowed = new InboxFollower(box.list, { pageSize: 5, windowMs: 4_000 });
    await windowed.poll();
    const before = box.reads();
    expect(ids(await windowed.poll())).toEqual([]);
    // Seconds 39 to 35 are inside the window (one page), 34 is not: the second page is the last read.
    expect(box.reads() - before).toBe(2);

    const bounded = new InboxFollower(box.list, { pageSize: 5, maxPages: 3, windowMs: 3_600_000 });
    await bounded.poll();
    const start = box.reads();
    await bounded.poll();
    expect(box.reads() - start).toBe(3);
  });
});
