import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook request as the receiver got it, with its arrival time (ms, performance clock of this process). */
export interface ReceivedHook {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: {
    id?: string;
    event: string;
    timestamp: string;
    email?: Record<string, unknown>;
    data: Record<string, unknown>;
  };
  arrivedAt: number;
}

export interface WebhookReceiver {
  /** Base URL; webhooks may use any path under it (each test its own, to tell its requests apart). */
  url: string;
  received: ReceivedHook[];
  on(path: string): ReceivedHook[];
  /** How to answer a request to `path`: a status (default 200), optionally after a delay. */
  respond: (hook: ReceivedHook, nth: number) => { status: number; delayMs?: number; body?: string };
  close(): Promise<void>;
}

/** A real HTTP server on loopback standing for a sender's webhook endpoint. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const perPath = new Map<string, number>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    on: (path) => receiver.received.filter((h) => h.path === path),
    respond: () => ({ status: 200 }),
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const hook: ReceivedHook = {
        path,
        headers: req.headers,
        rawBody,
        body: JSON.parse(rawBody),
        arrivedAt: performance.now(),
      };
      receiver.received.push(hook);
      const nth = (perPath.get(path) ?? 0) + 1;
      perPath.set(path, nth);
      const answer = receiver.respond(hook, nth);
      const send = () => {
        if (!res.destroyed)
          res
            .writeHead(answer.status, { 'content-type': 'text/plain' })
            .end(answer.body ?? `answered ${answer.status}`);
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return receiver;
}
