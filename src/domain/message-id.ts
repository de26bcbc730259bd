/**
 * The Message-ID header of an email. It is fixed when the email is stored, before any delivery attempt, so
 * a retried attempt repeats it and a report mailed back (ARF, DSN) can be matched to the email by it.
 */
export function messageIdFor(emailId: string, senderDomain: string): string {
  return `<${emailId}@${senderDomain}>`;
}
