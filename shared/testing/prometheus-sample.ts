/** The value of one series (`name{labels}`) on a Prometheus text page; undefined when absent. */
export function sample(page: string, series: string): number | undefined {
  const line = page.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
