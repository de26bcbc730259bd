import { Flags } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { commandExamples } from '../../lib/define-command.js';
import { fields } from '../../lib/format.js';
import { idempotencyHeaders, messageFlags, messageFromFlags } from '../../lib/message-input.js';
import { scheduledAt } from '../../lib/when.js';

// A class rather than emailCommand(): its output shows the send time as requested, which the answer lacks.
export default class ScheduledCreate extends EmailCommand {
  static override summary = 'Schedule one email for later (up to 30 days ahead).';
  static override description =
    'Give the time with --at (ISO 8601 with a zone) or --in (a duration from now: 90s, 10m, 1h30m, 2d). ' +
    'Every rule of a single send is checked now; the email is created and delivered at that time.';

  static override examples = commandExamples([
    '--in 10m --from hello@example.com --to you@example.net --subject Reminder --text "In ten minutes."',
    '--at 2026-01-01T09:00:00+01:00 -f hello@example.com -t you@example.net -s "Happy new year" --html-file card.html',
    '--in 1h -f hello@example.com -t you@example.net --template reminder --variables-file reminder.json',
  ]);

  static override flags = {
    at: Flags.string({ summary: 'Send time, ISO 8601 with a zone (2026-01-01T09:00:00Z).', exactlyOne: ['at', 'in'] }),
    in: Flags.string({ summary: 'Send after this long: 90s, 10m, 1h30m, 2d.', exactlyOne: ['at', 'in'] }),
    ...messageFlags,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ScheduledCreate);
    const when = scheduledAt(flags.at, flags.in);
    const request = { ...(await messageFromFlags(flags)), scheduledAt: when };
    const api = await this.emailClient(flags);
    const res = await api.scheduleEmail(request, { headers: idempotencyHeaders(flags) });
    await this.print(flags.json, res, () =>
      this.log(
        fields([
          ['id', res.id],
          ['status', res.status],
          ['scheduled_at', when],
        ]),
      ),
    );
  }
}
