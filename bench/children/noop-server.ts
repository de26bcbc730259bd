import crypto from 'node:crypto';
import fastify from 'fastify';
import { serve } from './ipc.js';

/**
 * Baseline 1: the same POST /v1/mail/emails with the same JSON body, answered by a Fastify route that
 * does nothing but parse the body and answer a 200 of the service's shape. The ceiling of an HTTP/JSON
 * route on this machine with this load generator.
 */
const app = fastify({ logger: false });
app.post('/v1/mail/emails', async (request) => {
  const body = request.body as { from?: string };
  if (typeof body?.from !== 'string') throw new Error('no from');
  return { id: `em_${crypto.randomUUID()}`, message_id: '', status: 'pending' };
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
serve({}, { port: typeof address === 'object' && address ? address.port : 0 }, () => app.close());
