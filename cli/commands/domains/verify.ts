import { Args, Flags } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { showDomain } from '../../lib/show.js';

export default class DomainsVerify extends AdminCommand {
  static override summary = 'Verify a domain by its DNS records (or at once with --force).';
  static override description = "The first verified domain of an account raises a daily quota of 100 to 1,000.";
  static override examples = [
    '<%= config.bin %> <%= command.id %> dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U --force',
  ];

  static override args = { id: Args.string({ description: 'Domain id (dom_...).', required: true }) };
  static override flags = { force: Flags.boolean({ summary: 'Operator override: verify without checking DNS.' }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(DomainsVerify);
    const api = await this.adminClient(flags);
    const domain = await api.verifyDomain({ id: args.id, force: flags.force });
    await this.print(flags.json, domain, () => {
      this.log(showDomain(domain));
      if (!domain.verified) this.log('\nNot verified yet: the TXT record above was not found. Try again once DNS has it, or use --force.');
    });
  }
}
