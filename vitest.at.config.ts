import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * scripts/test-at.sh: the test files run with their wall clock shifted by
 * libfaketime, each fork preloading it (TEST_AT_PRELOAD, TEST_AT_OFFSET). The run's
 * own process is not shifted: it holds the embedded ClickHouse (tests/global-setup.ts),
 * and chDB reads the real clock whatever libfaketime says, while libfaketime shifts
 * the deadlines of its timed waits, which then last hours.
 */
const preload = process.env.TEST_AT_PRELOAD;
const offset = process.env.TEST_AT_OFFSET;
if (!preload || !offset) throw new Error('vitest.at.config.ts is for scripts/test-at.sh, which sets TEST_AT_PRELOAD and TEST_AT_OFFSET');

export default mergeConfig(
  base,
  defineConfig({
    test: {
      env: { LD_PRELOAD: preload, FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
    },
  }),
);
