/**
 * A process of its own for inbound-listener-memory.test.ts: the inbound listener with the real receive path
 * (blob store, parse, receive repo, routes' resolver) over DATABASE_URL, and nothing else in its memory. Prints
 * `{"port": n}` once listening; on a line `measure` on stdin, prints `{"rss": baseline, "peak": highest}` since
 * the previous `measure` (sampled every 5 ms), the baseline taken after a garbage collection.
 */
import readline from 'node:readline';
import { createInboundBlobsRepo } from '../../src/db/repos/inbound-blobs-repo.js';
import { createInboundReceiveRepo } from '../../src/db/repos/inbound-receive-repo.js';
import { createInboundRoutesRepo } from '../../src/db/repos/inbound-routes-repo.js';
import { createSql } from '../../src/db/sql.js';
import { parseInbound } from '../../src/inbound/inbound-parse.js';
import { startInboundServer } from '../../src/inbound/report-listener.js';
import { loadTlsCertificate } from '../../src/inbound/tls-certificate.js';
import { createLogger } from '../../src/logger.js';
import { createInboundMailService } from '../../src/services/inbound-mail-service.js';
import { createInboundRoutesService } from '../../src/services/inbound-routes-service.js';

const sql = createSql(process.env.DATABASE_URL!, { max: 4 });
const logger = createLogger('silent', 'test');
const tls = await loadTlsCertificate({
  certFile: undefined,
  keyFile: undefined,
  dataDir: process.env.DATA_DIR!,
  hostname: 'mx.mailer.test',
});
const server = await startInboundServer({
  host: '127.0.0.1',
  port: 0,
  logger,
  tls,
  limits: { perAddress: 10, setupMs: 30_000 },
  acceptsRecipient: () => true,
  onMessage: async () => 'recorded',
  routes: createInboundMailService({
    blobs: createInboundBlobsRepo(sql),
    receipts: createInboundReceiveRepo(sql),
    routes: createInboundRoutesService({
      routes: createInboundRoutesRepo(sql),
      domains: { listByAccount: async () => [] },
      accounts: { get: async () => undefined },
    }),
    reports: { acceptsRecipient: () => true },
    parse: parseInbound,
    authenticate: async () => ({ spf: 'none', dkim: 'none', dmarc: 'none' }),
    maxBytes: Number(process.env.MAX_BYTES),
    logger,
  }),
});

let peak = 0;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage().rss);
};
setInterval(sample, 5).unref();
const gc = (globalThis as { gc?: () => void }).gc;
const baseline = () => {
  gc?.();
  return process.memoryUsage().rss;
};
let rss = baseline();
peak = rss;
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() !== 'measure') continue;
  sample();
  process.stdout.write(`${JSON.stringify({ rss, peak })}\n`);
  rss = baseline();
  peak = rss;
}
await server.close();
await sql.end();
