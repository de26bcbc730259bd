import type { BuiltMessage } from '../transport/send-built.js';
import type { TransportResult } from '../transport/transport.js';

/**
 * The SMTP transactions of one attempt: a copy per recipient, each under that recipient's own return path
 * (return-path.ts), the bytes built and signed once and shared. A bounce or a report can then only come back
 * for the copy whose envelope it was sent to: a recipient who forges a DSN or an ARF can speak for nobody but
 * itself (one recipient among the cc cannot suppress another, nor complain in its name). An email to one
 * recipient is one transaction; one to n recipients is n transactions, sent at once over the
 * transport's connections.
 */
export function recipientCopies(
  message: BuiltMessage,
  envelopeTo: string[],
  returnPathOf: (recipient: string) => string,
): BuiltMessage[] {
  return envelopeTo.map((recipient) => ({ ...message, envelope: { from: returnPathOf(recipient), to: [recipient] } }));
}

/** The answers of an attempt's transactions as one result, every recipient once. */
export function mergedResult(messageId: string, results: TransportResult[]): TransportResult {
  if (results.length === 1) return results[0]!;
  return {
    messageId,
    accepted: results.flatMap((r) => r.accepted),
    refused: results.flatMap((r) => r.refused),
    deferred: results.flatMap((r) => r.deferred),
  };
}
