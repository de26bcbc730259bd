import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { serve } from './ipc.js';

/**
 * The receiving mail server of every SMTP measurement, in a process of its own so that receiving mail
 * does not share the load generator's event loop. The same smtp-server setup as test/helpers/smtp-sink.ts
 * with `parse: false` (a message counts once the server accepted it), but it keeps only counts and
 * Message-IDs, and it survives a client resetting its connection (the test helper has no 'error'
 * listener, so a sender killed mid-session would crash it).
 */
let total = 0;
let duplicates = 0;
const seen = new Set<string>();

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  size: 64 * 1024 * 1024,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const head = Buffer.concat(chunks).subarray(0, 8192).toString('latin1');
      const messageId = /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? '';
      total += 1;
      if (messageId !== '') {
        if (seen.has(messageId)) duplicates += 1;
        else seen.add(messageId);
      }
      callback();
    });
  },
});
server.on('error', () => {
  // A sender that goes away mid-session (the service stopping) is not the sink's problem.
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const { port } = server.server.address() as AddressInfo;

serve(
  { count: () => ({ total, duplicates }) },
  { url: `smtp://127.0.0.1:${port}` },
  () => new Promise<void>((resolve) => server.close(() => resolve())),
);
