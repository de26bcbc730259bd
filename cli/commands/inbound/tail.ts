import { setTimeout as sleep } from 'node:timers/promises';
import { Flags } from '@oclif/core';
import { sampleId } from '../../lib/command-parts.js';
import { commandExamples } from '../../lib/define-command.js';
import { inboxAccountFlag, InboundCommand } from '../../lib/inbound-command.js';
import { inboundLine } from '../../lib/inbound-show.js';
import { InboxFollower } from '../../lib/inbox-follower.js';

/**
 * Follows an inbox: the newest --last messages, then each new one as it arrives, one line each (JSON Lines with
 * --json), until Ctrl-C or --count. It polls the inbox list, which the account's API and the operator's both
 * have, so it follows either.
 */
export default class InboundTail extends InboundCommand {
  static override summary = 'Print new inbound mail as it arrives, one line a message (Ctrl-C stops).';
  static override description =
    'Polls the inbox list (newest first) and prints each message not printed before, oldest first: received_at, id, ' +
    'sender, recipients, subject and authentication. --json prints each whole message, one a line (JSON Lines). ' +
    "With an API key: its account's inbox. Operators: --account <id> with the admin token.";
  static override examples = commandExamples(['', '--last 5', `--account ${sampleId('acc')} --json`, '--count 1']);
  static override flags = {
    account: inboxAccountFlag,
    last: Flags.integer({ summary: 'Print the newest this many messages first.', default: 0, min: 0, max: 100 }),
    interval: Flags.integer({ summary: 'Milliseconds between polls.', default: 1000, min: 100 }),
    count: Flags.integer({ summary: 'Stop after printing this many messages.', min: 1 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(InboundTail);
    const inbox = await this.inbox(flags, flags.account === undefined ? undefined : { accountId: flags.account });
    const { messageToJson } = await import('../../lib/rpc.js');
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.once('SIGINT', onSigint);
    const follower = new InboxFollower((req) => inbox.list(req, stop.signal));
    let printed = 0;
    let first = true;
    try {
      while (!stop.signal.aborted) {
        const fresh = await follower.poll(first ? flags.last : 0).catch((err: unknown) => {
          if (stop.signal.aborted) return [];
          throw err;
        });
        if (first)
          this.note(
            `following ${flags.account === undefined ? "the API key's inbox" : `the inbox of ${flags.account}`} (Ctrl-C stops)`,
          );
        first = false;
        for (const m of fresh) {
          this.log(flags.json ? JSON.stringify(messageToJson(m)) : inboundLine(m));
          printed += 1;
          if (flags.count !== undefined && printed >= flags.count) return;
        }
        await sleep(flags.interval, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    } finally {
      process.removeListener('SIGINT', onSigint);
    }
  }
}
