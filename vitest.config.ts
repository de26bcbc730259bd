import { defineConfig } from 'vitest/config';

// Unit tests touch no I/O, so their project skips the global setup: `vitest run --project unit` takes seconds.
const UNIT = ['test/unit/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    reporters: ['default', './test/helpers/closing-line-reporter.ts'],
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, setupFiles: ['test/helpers/unit-no-io.ts'] } },
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
