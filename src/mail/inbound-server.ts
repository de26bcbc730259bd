import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Logger } from '../logger.js';

/** Reports are small, but some quote the whole original; beyond this a message is refused (552). */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;

export interface InboundServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * The SMTP listener reports are mailed back to (complaints, bounce reports). It takes mail for any
 * recipient and answers 250 once `onMessage` has dealt with it, whatever it was: refusing what is not a
 * report would send a bounce of a bounce back to its sender. Only a failure of `onMessage` is answered
 * 451, so the sending server tries again later. No AUTH and no STARTTLS: it listens on loopback unless
 * told otherwise, behind whatever MX receives mail for the service.
 */
export async function startInboundServer(options: {
  host: string;
  port: number;
  logger: Logger;
  onMessage: (raw: Buffer) => Promise<unknown>;
}): Promise<InboundServer> {
  const { logger } = options;
  const server = new SMTPServer({
    name: 'mailer-inbound',
    banner: 'mailer feedback listener',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_INBOUND_BYTES,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_INBOUND_BYTES) chunks.push(c);
      });
      stream.on('end', () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded || size > MAX_INBOUND_BYTES) {
          return callback(Object.assign(new Error('5.3.4 message exceeds the fixed maximum message size'), { responseCode: 552 }));
        }
        options.onMessage(Buffer.concat(chunks)).then(() => callback(), (err: unknown) => {
          logger.warn({ err, from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '' }, 'inbound message not handled; asked to retry');
          callback(Object.assign(new Error('4.3.0 temporary failure, try again later'), { responseCode: 451 }));
        });
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  server.on('error', (err) => logger.warn({ err }, 'inbound listener error'));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
