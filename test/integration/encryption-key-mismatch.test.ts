import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { inject, it, expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startMailer } from '../../src/main.js';
import { stackEnv, startStack } from '../helpers/stack.js';

const hexKey = () => crypto.randomBytes(32).toString('hex');

it('a process whose MAILER_ENCRYPTION_KEY did not seal the stored DKIM keys refuses to start, saying so', async () => {
  // The first process seals the default domain's key under its own encryption key.
  const first = await startStack({ MAILER_ENCRYPTION_KEY: hexKey() });
  const { databaseUrl, taskQueue } = first;
  const sinkUrl = first.sink.url;
  await first.stop();

  const dataDir = path.join(inject('tmpRoot'), `${taskQueue}-second`);
  await fs.mkdir(dataDir, { recursive: true });
  const env = stackEnv(databaseUrl, sinkUrl, taskQueue, dataDir, { MAILER_ENCRYPTION_KEY: hexKey() });
  const started = startMailer(loadConfig(env), { logger: createLogger('fatal', 'test'), env: process.env });
  await expect(started).rejects.toThrow(/sealed under another encryption key .*the same MAILER_ENCRYPTION_KEY/);
});
