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
    // Integration files each create their own database. Three forks on two cores: much of a
    // file's time is spent waiting (for a service to start, a poll, a timer), and with two
    // forks the run used 1.3 of the 2 cores on average (15 min 13 s, 2026-11-30).
    pool: 'forks',
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
  },
});
