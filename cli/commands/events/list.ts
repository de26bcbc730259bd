import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { EVENT_TYPE_OPTIONS, eventLine } from '../../lib/event-lines.js';

export default emailCommand({
  summary: "One page of the account's events, oldest first, from a cursor (GET /events).",
  description: 'The last line is the cursor to pass as --after for the next page (next_cursor with --json).',
  examples: ['', '--type bounce --limit 500', '--after <next_cursor> --json', '--email <em_id>'],
  flags: {
    after: Flags.string({
      summary: 'Start after this cursor (a next_cursor printed before); default: the first event.',
      default: '',
    }),
    limit: Flags.integer({ summary: 'Events per page (up to 1000).', default: 100, min: 1, max: 1000 }),
    type: Flags.option({ options: EVENT_TYPE_OPTIONS, summary: 'Only events of this type.' })(),
    email: Flags.string({ summary: "Only this email's events (em_...)." }),
  },
  call: (api, { flags }) =>
    api.listEvents({ after: flags.after, limit: flags.limit, type: flags.type ?? '', emailId: flags.email ?? '' }),
  show: (res, { log }) => {
    for (const e of res.events) log(eventLine(e));
    log(`next_cursor  ${res.nextCursor}`);
  },
});
