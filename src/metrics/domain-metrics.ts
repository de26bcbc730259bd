import { Gauge, type Registry } from 'prom-client';

/**
 * Sender domains whose DNS went wrong after they were verified, read at scrape time like the delivery queue
 * (every role reports it: it is the database's state, not a process's). Such a domain keeps sending, but its mail
 * may fail SPF or DKIM at the receiver, which is why an operator is alerted (deploy/prometheus/alerts.yml).
 * A read that failed or took too long leaves the gauge NaN, so that no alert reads it as "none failing".
 */
export function domainMetrics(
  registry: Registry,
  read: ((timeoutMs: number) => Promise<number>) | undefined,
  onError: (err: unknown) => void,
) {
  const failing = new Gauge({
    name: 'mailer_domains_dns_failing',
    help: 'Verified sender domains whose required DNS records (ownership, SPF, DKIM) were failing at their last check: they keep sending, but receivers may reject or junk their mail. NaN when the database could not be read within a second.',
    registers: [registry],
  });
  return {
    async refreshDomainGauges(timeoutMs: number): Promise<void> {
      if (!read) return;
      try {
        failing.set(await read(timeoutMs));
      } catch (err) {
        failing.set(Number.NaN);
        onError(err);
      }
    },
  };
}
