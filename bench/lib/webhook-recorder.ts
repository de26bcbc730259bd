import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { onCleanup } from './lifecycle.js';

// Not test/helpers/webhook-receiver.ts: the figures take a request's arrival as Date.now() when its
// headers arrived (the clock the service stamps events by), check each signature, and count a body that
// is not JSON instead of throwing.

/** A webhook request as it arrived. */
export interface Hook {
  path: string;
  deliveryId: string;
  event: string;
  subject: string;
  /** The event's own time (body `timestamp`), ms since the epoch. */
  eventAt: number;
  /** Date.now() when the request's headers had arrived. */
  arrivedAt: number;
  status: number;
  signatureOk: boolean;
}

/** The webhook endpoint: `/ok` answers 200, `/fail` answers 500; every request is kept with its arrival time. */
export async function startWebhookRecorder(secrets: Map<string, string>) {
  const hooks: Hook[] = [];
  let unreadable = 0;
  const server = http.createServer((req, res) => {
    const arrivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const status = path === '/fail' ? 500 : 200;
      const rawBody = Buffer.concat(chunks);
      try {
        const body = JSON.parse(rawBody.toString('utf8')) as {
          event: string;
          timestamp: string;
          email?: { subject?: string };
          data?: { subject?: unknown };
        };
        const secret = secrets.get(path);
        hooks.push({
          path,
          deliveryId: String(req.headers['x-mail-delivery-id'] ?? ''),
          event: body.event,
          // An inbound event is about no email of ours: its subject is the received message's.
          subject: body.email?.subject ?? (typeof body.data?.subject === 'string' ? body.data.subject : ''),
          eventAt: Date.parse(body.timestamp),
          arrivedAt,
          status,
          signatureOk: secret !== undefined && verifyWebhookSignature({ secret, headers: req.headers, rawBody }).ok,
        });
      } catch {
        unreadable += 1;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'bench: always 500');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const close = onCleanup('stop the webhook receiver', async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hooks,
    unreadable: () => unreadable,
    close,
  };
}

/** The recorder and what it has received so far. */
export type WebhookRecorder = Awaited<ReturnType<typeof startWebhookRecorder>>;
