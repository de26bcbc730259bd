/** The complaints already recorded for an email: how many, and every recipient they named. */
export interface PriorComplaints {
  count: number;
  recipients: ReadonlySet<string>;
}

/**
 * The recipients a new complaint about an email adds, or undefined when it adds nothing: a complaint
 * counts once per recipient, however often its feedback loop resends it. One that names nobody (the
 * feedback loop redacted the complainer) adds something only when the email has no complaint yet.
 */
export function newComplainers(prior: PriorComplaints, recipients: string[]): string[] | undefined {
  if (recipients.length === 0) return prior.count === 0 ? [] : undefined;
  const fresh = [...new Set(recipients)].filter((r) => !prior.recipients.has(r));
  return fresh.length > 0 ? fresh : undefined;
}
