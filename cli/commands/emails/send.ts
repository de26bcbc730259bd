import { EmailCommand } from '../../lib/base-command.js';
import { fields } from '../../lib/format.js';
import { messageFlags, messageFromFlags } from '../../lib/message-input.js';

export default class EmailsSend extends EmailCommand {
  static override summary = 'Send one email now.';
  static override description =
    'Accepted emails are answered `pending` and delivered in the background; follow one with `emails get`. ' +
    'At least one of --html, --html-file, --text or --text-file is required.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> --from hello@example.com --to you@example.net --subject Hello --text "It works."',
    '<%= config.bin %> <%= command.id %> -f "Shop <orders@example.com>" -t a@example.net -t b@example.net -s "Your order" --html-file order.html --text-file order.txt --attach invoice.pdf --tag order=1234',
    '<%= config.bin %> <%= command.id %> -f hello@example.com -t you@example.net -s Hi --text Hi --header "X-Campaign: spring" --idempotency-key order-1234 --json',
  ];

  static override flags = messageFlags;

  async run(): Promise<void> {
    const { flags } = await this.parse(EmailsSend);
    const request = await messageFromFlags(flags);
    const headers = flags['idempotency-key'] ? { 'idempotency-key': flags['idempotency-key'] } : undefined;
    const api = await this.emailClient(flags);
    const res = await api.sendEmail(request, { headers });
    await this.print(flags.json, res, () => {
      this.log(fields([['id', res.id], ['status', res.status]]));
      this.note(`Follow it with: ${this.config.bin} emails get ${res.id}`);
    });
  }
}
