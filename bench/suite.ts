/**
 * The contract between bench/run.ts and the suites in bench/suites/. A suite module
 * exports `name`, `description` and `run()`. Rows are generic (name + any metrics) so
 * throughput, ingestion or analytics suites fit without changing the runner.
 */

export type Metric = string | number;

export interface Row {
  name: string;
  [metric: string]: Metric;
}

/** A pass/fail acceptance criterion; any failure makes the runner exit 1. */
export interface Check {
  name: string;
  pass: boolean;
  detail: string;
}

export interface SuiteResult {
  suite: string;
  /** Each row carries its ratio to the baseline row measured in the same run, if any. */
  rows: Row[];
  baseline?: Row;
  notes?: string[];
  checks?: Check[];
  /** Further tables, printed after the main one, each under its title. */
  tables?: Array<{ title: string; rows: Row[] }>;
}

export interface SuiteModule {
  name: string;
  description: string;
  run(): Promise<SuiteResult>;
}

/** A progress line of a suite while it runs, indented under the runner's suite heading. */
export const log = (line: string): void => {
  process.stdout.write(`  ${line}\n`);
};
