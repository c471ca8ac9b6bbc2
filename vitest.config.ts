import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['services/**/*.test.ts', 'shared/**/*.test.ts', 'bench/**/*.test.ts', 'tests/**/*.test.ts'],
    // One embedded ClickHouse for the run; each file takes a database on it (shared/testing/test-clickhouse.ts).
    globalSetup: ['tests/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration files each create their own database; two cores, so two forks.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
