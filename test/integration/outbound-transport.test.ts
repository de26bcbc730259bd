import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboundTransport } from '../../src/app/outbound-transport.js';
import { loadConfig } from '../../src/config.js';
import type { EgressRepo } from '../../src/db/index.js';
import { startMxHosts, type MxNetwork } from '../helpers/mx-servers.js';

// How mail leaves per MAILER_DELIVERY: relay and catcher modes are exactly as before egress shaping (one pooled
// transport, no shaper, no MX cache, no MTA-STS: the shaper's state is never touched), direct mode is shaped.

let network: MxNetwork | undefined;
afterEach(async () => {
  await network?.close();
  network = undefined;
});

/** A repository every use of which fails the test: relay and catcher modes must not touch egress state. */
const untouchable = new Proxy({} as EgressRepo, {
  get: (_target, key) => {
    throw new Error(`egress state used in a mode that is not shaped: ${String(key)}`);
  },
});
const logger = pino({ level: 'silent' });
const message = (to: string) => ({
  messageId: '<relay-1@mailer.test>',
  envelope: { from: 'b@rp.sender.test', to: [to] },
  raw: Buffer.from('Subject: s\r\n\r\nt\r\n'),
});

describe('outbound transport', () => {
  for (const mode of ['relay', 'catcher'] as const) {
    it(`${mode} mode: one pooled transport to the server, no shaper, replies without MX or TLS fields`, async () => {
      network = await startMxHosts([{ address: '127.0.0.2' }]);
      const url = `smtp://127.0.0.2:${network.port}`;
      const config = loadConfig({ MAILER_DELIVERY: mode, SMTP_URL: url, MAILER_HOSTNAME: 'mailer.test' });
      const outbound = createOutboundTransport(config, url, { egressRepo: untouchable, logger });
      try {
        expect(outbound.shaper).toBeUndefined();
        expect(outbound.transport.host).toBe('127.0.0.2');
        const result = await outbound.transport.send(message('a@anywhere.test'), {
          accountId: 'acc_1',
          stream: 'broadcast',
        });
        expect(result.accepted).toEqual([{ address: 'a@anywhere.test', response: expect.stringMatching(/^250 /) }]);
        expect(network.hosts[0]?.received.map((r) => [r.source, r.ehlo])).toEqual([['127.0.0.1', 'mailer.test']]);
      } finally {
        await outbound.close();
      }
    });
  }

  it('direct mode: shaped, and close() stops the rules watch and writes the last figures', async () => {
    const flushed: string[] = [];
    const repo = {
      listSites: async () => [],
      flush: async (site: string) => {
        flushed.push(site);
      },
    } as unknown as EgressRepo;
    const config = loadConfig({ MAILER_DELIVERY: 'direct', MAILER_HOSTNAME: 'mailer.test', MAILER_MTA_STS: '0' });
    const outbound = createOutboundTransport(config, '', { egressRepo: repo, logger });
    expect(outbound.shaper).toBeDefined();
    expect(outbound.transport.host).toBeUndefined();
    outbound.shaper?.connectionsChanged('google', 1);
    const sighups = process.listenerCount('SIGHUP');
    await outbound.close();
    expect(process.listenerCount('SIGHUP')).toBe(sighups - 1);
    expect(flushed).toEqual(['google']);
  });
});
