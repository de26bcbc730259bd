/**
 * Runs `fn` over `items` with at most `size` calls in flight, in order of `items`. After a call fails no new
 * one starts, and the pool answers (with the first failure) only once the calls in flight have ended: a
 * delivery lane holding an SMTP outcome still being recorded (outcome-writer.ts) keeps its activity alive,
 * heartbeating and renewing its leases, instead of being left behind by an activity already failed and
 * retried, whose next attempt would take the lapsed lease and send the email again.
 */
export async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lanes = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (next < items.length && !failure) {
      try {
        await fn(items[next++]!);
      } catch (err) {
        failure ??= { err };
      }
    }
  });
  await Promise.all(lanes);
  if (failure) throw failure.err;
}
