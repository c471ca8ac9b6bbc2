import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['services/**/*.test.ts', 'shared/**/*.test.ts', 'bench/**/*.test.ts', 'tests/**/*.test.ts'],
    // One embedded ClickHouse for the run; each file takes a database on it (shared/testing/test-clickhouse.ts).
    globalSetup: ['tests/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll's own default is 1 s, which a loaded 2-core machine (a browser, the API and
    // the embedded ClickHouse at once) can exceed for one page load: a CI run failed so. A poll
    // ends as soon as it holds, so the longer bound costs nothing when all is well.
    expect: { poll: { timeout: 15_000 } },
    // Integration files each create their own database; two cores, so two forks.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
