/**
 * wrk (Debian package `wrk`) as the load generator of the HTTP suites: it costs far
 * less CPU per request than a Node client, so on 2 cores it does not starve the server.
 * A suite's Lua script builds its requests; `WRK_RESULT_LUA` makes wrk print one
 * machine-readable line that runWrk parses.
 */
import { spawn, spawnSync } from 'node:child_process';

export const WRK_RESULT_LUA = `
done = function(summary, latency, requests)
  io.write(string.format('RESULT {"requests":%d,"durationUs":%d,"p50Us":%.0f,"p99Us":%.0f,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
`;

export interface WrkResult {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  connect: number;
  read: number;
  write: number;
  /** Answers with a status outside 2xx/3xx. */
  status: number;
  timeout: number;
}

export function requireWrk(): void {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (probe.error) throw new Error('wrk is not installed (apt-get install -y wrk)');
}

/** One wrk thread against loopback, killed if it overruns its duration by a minute. */
export function runWrk(options: { url: string; script: string; seconds: number; connections: number }): Promise<WrkResult> {
  const { url, script, seconds, connections } = options;
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '2s', '-s', script, url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = /^RESULT (.*)$/m.exec(out);
      if (code !== 0 || !line) return reject(new Error(`wrk failed (exit ${code}):\n${out}`));
      resolve(JSON.parse(line[1]!) as WrkResult);
    });
  });
}

export function wrkErrors(r: WrkResult): number {
  return r.connect + r.read + r.write + r.status + r.timeout;
}
