/** The rules file (or MAILER_EGRESS_POOLS) refused as a whole: the message names the key (`site.google.automation[0].match: ...`). */
export class EgressRulesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EgressRulesError';
  }
}
