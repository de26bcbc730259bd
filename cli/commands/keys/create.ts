import { Flags } from '@oclif/core';
import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { showApiKey } from '../../lib/show.js';

export default class KeysCreate extends AdminCommand {
  static override summary = 'Create an API key. The key is shown this once: keep it.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name production --permission send_only',
    '<%= config.bin %> <%= command.id %> -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name billing --permission all --allowed-domain billing.acme.com --json',
  ];

  static override flags = {
    account: accountFlag,
    name: Flags.string({ summary: 'Label of the key.', required: true }),
    permission: Flags.option({ options: ['read_only', 'send_only', 'all'] as const, summary: 'What the key may do.', required: true })(),
    'allowed-domain': Flags.string({ summary: 'Sender domain the key may send from (repeatable; default: any verified domain).', multiple: true }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(KeysCreate);
    const api = await this.adminClient(flags);
    const key = await api.createApiKey({
      accountId: flags.account,
      name: flags.name,
      permission: flags.permission,
      allowedDomains: flags['allowed-domain'] ?? [],
    });
    await this.print(flags.json, key, () => {
      this.log(showApiKey(key));
      this.log(`\nAPI key (shown once, it cannot be read again; keep it):\n  ${key.key ?? ''}`);
    });
  }
}
