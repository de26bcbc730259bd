import { defineConfig } from 'vitest/config';

// Unit tests do no I/O (no process, socket, DNS query or file write; no repository file read but test/fixtures/),
// which test/helpers/unit-no-io.ts enforces. So: no global setup, and files share a worker's modules
// (isolate: false), as importing the app per file was most of the project's time. Why and how: docs/testing.md.
const UNIT = ['test/unit/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    reporters: ['default', './test/helpers/closing-line-reporter.ts'],
    maxWorkers: 2,
    // A hang's bound, not a speed check: the slowest CLI walk-throughs (each a dozen CLI processes) took 23-34 s
    // in CI on a 2-core machine beside the suite's other files, over half of the 60 s this was.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll gives up after 1 s by default: a loaded CI machine (two vitest workers, each with its stack,
    // beside other tenants) misses that with a correct service. A poll ends as soon as it succeeds, so a longer
    // limit costs a passing run nothing.
    expect: { poll: { timeout: 10_000 } },
    teardownTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, setupFiles: ['test/helpers/unit-no-io.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: UNIT,
          // One embedded PostgreSQL and one Temporal dev server for the whole run; each test file gets its own
          // database (copied from a migrated template) and its own task queue, so files run in parallel.
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
    ],
  },
});
