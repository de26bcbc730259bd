import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook endpoint on loopback that answers 200 to everything and keeps what it got. */
export async function startWebhookReceiver(): Promise<{ url: string; received: ReceivedRequest[]; close(): Promise<void> }> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mail`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
