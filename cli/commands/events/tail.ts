import { setTimeout as sleep } from 'node:timers/promises';
import { Flags } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { commandExamples } from '../../lib/define-command.js';
import { EVENT_TYPE_OPTIONS, eventLine } from '../../lib/event-lines.js';

/** The largest page the API gives: catching up reads as few pages as it can. */
const PAGE = 1000;

/**
 * Prints the account's events oldest first, then follows new ones by polling GET /events with the cursor
 * of the last answer, so each event is printed once, until Ctrl-C (or --count). Not a command with one
 * result: --json prints one event per line (JSON Lines), as each arrives.
 */
export default class EventsTail extends EmailCommand {
  static override summary = "Print the account's events oldest first and follow new ones (Ctrl-C stops).";
  static override description =
    'Polls GET /events with the cursor of its last answer, so every event is printed once, in order. On stop, the cursor to resume from is printed on stderr.';
  static override examples = commandExamples([
    '',
    '--type bounce',
    '--after <cursor> --json',
    '--no-follow --json',
    '--email <em_id>',
  ]);
  static override flags = {
    type: Flags.option({ options: EVENT_TYPE_OPTIONS, summary: 'Only events of this type.' })(),
    email: Flags.string({ summary: "Only this email's events (em_...)." }),
    after: Flags.string({
      summary: 'Start after this cursor (as printed on stop, or a next_cursor); default: the first event.',
      default: '',
    }),
    interval: Flags.integer({ summary: 'Milliseconds between polls once caught up.', default: 1000, min: 100 }),
    follow: Flags.boolean({ summary: 'Keep polling for new events once caught up.', default: true, allowNo: true }),
    count: Flags.integer({ summary: 'Stop after printing this many events.', min: 1 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(EventsTail);
    const api = await this.emailClient(flags);
    const { messageToJson } = await import('../../lib/rpc.js');
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.once('SIGINT', onSigint);
    let cursor = flags.after;
    let printed = 0;
    try {
      while (!stop.signal.aborted) {
        // With --count, never more than are still wanted: the page's next_cursor is then where the last one printed is.
        const limit = flags.count === undefined ? PAGE : Math.min(PAGE, flags.count - printed);
        const res = await api
          .listEvents(
            { after: cursor, limit, type: flags.type ?? '', emailId: flags.email ?? '' },
            { signal: stop.signal },
          )
          .catch((err: unknown) => {
            if (stop.signal.aborted) return undefined;
            throw err;
          });
        if (!res) break;
        for (const e of res.events) this.log(flags.json ? JSON.stringify(messageToJson(e)) : eventLine(e));
        printed += res.events.length;
        cursor = res.nextCursor;
        if (flags.count !== undefined && printed >= flags.count) break;
        if (res.events.length === limit) continue;
        if (!flags.follow) break;
        await sleep(flags.interval, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    } finally {
      process.removeListener('SIGINT', onSigint);
    }
    this.note(`cursor ${cursor}`);
  }
}
