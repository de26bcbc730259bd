import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { locateTemporalCli } from './temporal-dev-server.js';

/** `npx tsx src/local/install-temporal-cli.ts`: finds or builds the Temporal CLI (see temporal-dev-server.ts), prints where. */
const config = loadConfig(process.env);
const logger = createLogger('info', 'temporal-cli');
const cli = await locateTemporalCli({
  cliPath: config.temporalCliPath,
  cacheDir: config.cacheDir,
  env: process.env,
  logger,
});
if (!cli) {
  console.error('No Temporal CLI found and none could be built: install Go, or set TEMPORAL_CLI_PATH.');
  process.exit(1);
}
console.log(`Temporal CLI: ${cli}`);
