import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { locateTemporalCli, startDevServer } from '../../src/local/temporal-dev-server.js';
import { freePort } from '../helpers/ports.js';

/**
 * The embedded Temporal dev server keeps every workflow's input (addresses, subjects) in temporal.db in the data
 * dir (issue 22, item 7): the file is its owner's only whatever the umask the service was started with, and
 * the directory made for it is 0700.
 */
it('the embedded Temporal dev server writes temporal.db 0600 into a 0700 data dir, under the usual umask 022', async () => {
  const config = loadConfig(process.env);
  const cli = await locateTemporalCli({
    cliPath: config.temporalCliPath,
    cacheDir: config.cacheDir,
    env: process.env,
    logger: createLogger('warn', 'test'),
  });
  if (!cli) throw new Error('no Temporal CLI');
  const dataDir = path.join(inject('tmpRoot'), `temporal-files-${process.pid}`, 'data');
  const previous = process.umask(0o022);
  try {
    const server = await startDevServer({
      cli,
      dataDir,
      port: await freePort(),
      namespace: 'default',
      ui: false,
      logger: createLogger('warn', 'test'),
    });
    try {
      expect((await fs.stat(dataDir)).mode & 0o777).toBe(0o700);
      const files = (await fs.readdir(dataDir)).filter((f) => f.startsWith('temporal.db'));
      expect(files).toContain('temporal.db');
      for (const f of files)
        expect({ file: f, mode: (await fs.stat(path.join(dataDir, f))).mode & 0o777 }).toEqual({
          file: f,
          mode: 0o600,
        });
    } finally {
      await server.stop();
    }
  } finally {
    process.umask(previous);
  }
});
