import { readFile } from 'node:fs/promises';

/**
 * CPU accounting from Linux /proc, for suites that report where the cores went
 * (their own processes, and what other tenants of a shared machine took).
 * Elsewhere every figure reads 0.
 */
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * Above this much CPU used by unrelated processes during a round (in % of one core), a
 * suite warns: such rounds measure the neighbours as much as the code.
 */
export const OTHER_CPU_WARNING_PERCENT = 10;

/** User + system CPU seconds of a process so far; 0 once it is gone. */
export async function processCpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ESRCH')) return 0; // the process is gone
    throw err;
  }
}

/** Busy CPU seconds of the whole machine, all cores (all but idle and iowait). */
export async function machineBusySeconds(): Promise<number> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return (ticks.reduce((sum, t) => sum + t, 0) - ticks[3]! - ticks[4]!) / TICKS_PER_SECOND;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return 0; // no /proc (not Linux): no figure
    throw err;
  }
}

/** Measures CPU seconds of the given processes and of the machine between start and stop. */
export async function cpuMeter(pids: Record<string, number>) {
  const read = async () => ({
    machine: await machineBusySeconds(),
    each: Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([name, pid]) => [name, await processCpuSeconds(pid)] as const))),
  });
  const before = await read();
  return {
    /** CPU seconds per named process, and `others`: the machine's busy time none of them used. */
    async stop(): Promise<Record<string, number>> {
      const after = await read();
      const used: Record<string, number> = {};
      let ours = 0;
      for (const name of Object.keys(pids)) {
        used[name] = after.each[name]! - before.each[name]!;
        ours += used[name]!;
      }
      used.others = Math.max(0, after.machine - before.machine - ours);
      return used;
    },
  };
}

function isErrno(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}

/** fetch() to a port nobody listens on yet (a server still starting). */
export function isConnectionRefused(err: unknown): boolean {
  return err instanceof TypeError && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED';
}
