import type { PendingQuery, Row } from 'postgres';

/**
 * A read for /metrics, cancelled (and rejected) past `timeoutMs`, so that a scrape never waits on a slow or
 * exhausted database: `what` names it in the rejection.
 */
export async function timedRead<T extends readonly Row[]>(
  query: PendingQuery<T>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      query.cancel();
      reject(new Error(`${what} took over ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([query, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
