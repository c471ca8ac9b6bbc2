import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A service's main.ts as its own process (`node --import tsx`), for tests that
 * kill and restart it. Output is kept for failure messages.
 */
export interface ChildService {
  readonly pid: number;
  readonly output: string;
  /** Resolves when a line matching `pattern` has been printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export function startChildService(mainPath: string, env: Record<string, string>): ChildService {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', mainPath], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid!,
    get output() {
      return output;
    },
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        if (exited() || Date.now() > deadline) throw new Error(`${mainPath} never printed ${pattern}:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async kill(signal = 'SIGTERM') {
      if (exited()) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await gone;
    },
  };
}
