import { emailCommand } from '../../lib/define-command.js';
import { fields } from '../../lib/format.js';
import { idempotencyHeaders, messageFlags, messageFromFlags } from '../../lib/message-input.js';

export default emailCommand({
  summary: 'Send one email now.',
  description:
    'Accepted emails are answered `pending` and delivered in the background; follow one with `emails get`. ' +
    'At least one of --html, --html-file, --text or --text-file is required; or --template names a stored ' +
    'template (`templates create`) that gives the subject and bodies, rendered with the --var/--variables given.',
  examples: [
    '--from hello@example.com --to you@example.net --subject Hello --text "It works."',
    '-f "Shop <orders@example.com>" -t a@example.net -t b@example.net -s "Your order" --html-file order.html --text-file order.txt --attach invoice.pdf --tag order=1234',
    '-f hello@example.com -t you@example.net -s Hi --text Hi --header "X-Campaign: spring" --idempotency-key order-1234 --json',
    '-f hello@example.com -t you@example.net --template welcome --var name=Ann --var account.plan=pro --locale de',
  ],
  flags: messageFlags,
  call: async (api, { flags }) => api.sendEmail(await messageFromFlags(flags), { headers: idempotencyHeaders(flags) }),
  show(res, { bin, log, note }) {
    log(
      fields([
        ['id', res.id],
        ['status', res.status],
      ]),
    );
    note(`Follow it with: ${bin} emails get ${res.id}`);
  },
});
