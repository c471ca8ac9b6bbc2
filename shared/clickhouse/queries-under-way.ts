import type { ClickHouseClient } from '@clickhouse/client';

/**
 * Waits until the statements ClickHouse runs right now whose query ids start with
 * `prefix` (any client's, any process's) have finished, or `timeoutMs` passed (then
 * resolves false: a wedged statement must not stop the caller for good). Statements
 * started after the first look are not waited for. On the embedded endpoint, which runs
 * one statement at a time in arrival order, the first look already comes after them.
 */
export async function queriesUnderWayDone(clickhouse: ClickHouseClient, prefix: string, timeoutMs: number): Promise<boolean> {
  const running = async () => {
    const result = await clickhouse.query({
      query: 'SELECT query_id FROM system.processes WHERE startsWith(query_id, {prefix:String})',
      query_params: { prefix },
      format: 'JSONEachRow',
    });
    return new Set((await result.json<{ query_id: string }>()).map((r) => r.query_id));
  };
  let waitingFor = await running();
  const deadline = Date.now() + timeoutMs;
  while (waitingFor.size > 0) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
    const now = await running();
    waitingFor = new Set([...waitingFor].filter((id) => now.has(id)));
  }
  return true;
}
