import { readFile } from 'node:fs/promises';

/** Another process's resident memory now and at its peak so far (VmHWM), in MB, from /proc. */
export async function processRssMb(pid: number): Promise<{ now: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}
