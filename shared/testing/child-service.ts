import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBuilt } from '../../scripts/build-inputs.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A service's main.ts as its own process, for tests that kill and restart it: by
 * default its TypeScript source (`node --import tsx`); with `compiled`, the build
 * in dist/ as production runs it (`node dist/.../main.js`, what `npm run start:*`
 * runs), which must be built from the sources as they are (`npm test` builds first
 * when they changed). Output is kept for failure messages.
 */
export interface ChildService {
  readonly pid: number;
  readonly output: string;
  /** Resolves when a line matching `pattern` has been printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves with the exit code (null when ended by a signal) once the process has exited. */
  readonly exited: Promise<number | null>;
}

/** `cwd`: the checkout whose main.ts runs (default this one; another revision's for bench/before-after.ts). */
export function startChildService(mainPath: string, env: Record<string, string>, options: { compiled?: boolean; cwd?: string } = {}): ChildService {
  const args = options.compiled ? [compiledPath(mainPath)] : ['--import', 'tsx', mainPath];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    pid: child.pid!,
    get output() {
      return output;
    },
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        if (hasExited() || Date.now() > deadline) throw new Error(`${mainPath} never printed ${pattern}:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async kill(signal = 'SIGTERM') {
      if (hasExited()) return;
      child.kill(signal);
      await exited;
    },
  };
}

/** Whether dist/ was built from the sources as they are now: asked once per test process (hashing every input takes ~0.2 s). */
let builtFromCurrentSources: boolean | undefined;

/** dist/<path>.js for services/<path>.ts; throws when it is missing or was built from other sources than these. */
export function compiledPath(mainPath: string): string {
  const compiled = join(repoRoot, 'dist', mainPath.replace(/\.ts$/, '.js'));
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run npm run build`);
  builtFromCurrentSources ??= isBuilt(repoRoot);
  if (!builtFromCurrentSources) throw new Error('dist/ was not built from the sources as they are now: run npm run build');
  return compiled;
}
