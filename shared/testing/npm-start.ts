import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** `npm start` as a user runs it, in its own process group, so a test can signal it whole as a terminal does. */
export interface NpmStart {
  child: ChildProcess;
  output(): string;
  /** The API's and the redirector's base URLs, as printed. */
  url: string;
  redirectUrl: string;
  /** The admin port's base URL (ADMIN_PORT): every part's /metrics, the redirector's /ready. */
  adminUrl: string;
  /** The node process npm started (what a user's `kill` would target). */
  nodePid: number;
  /**
   * Resolves once npm and the node process have both exited, with npm's exit code (null
   * when a signal ended it). npm may exit on a signal before node has finished stopping.
   */
  exited: Promise<number | null>;
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
const MAIN = 'dist/services/all-in-one/main.js';

/** Resolves once `pid` no longer exists (it is not our child: its exit is seen in /proc). */
async function processGone(pid: number): Promise<void> {
  while (isRunning(pid)) await new Promise((r) => setTimeout(r, 50));
}

function isRunning(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); // a zombie has exited
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

export async function npmStart(env: Record<string, string>, timeoutMs = 90_000): Promise<NpmStart> {
  const child = spawn('npm', ['start'], { env: { ...process.env, API_PORT: '0', REDIRECT_PORT: '0', ADMIN_PORT: '0', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const npmExited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const api = /linkroute API on (http:\/\/\S+)/.exec(output);
    const redirect = /linkroute redirects on (http:\/\/\S+)/.exec(output);
    const admin = /linkroute metrics on (http:\/\/\S+)\/metrics/.exec(output);
    if (api && redirect && admin) {
      const nodePid = descendantRunning(child.pid!, MAIN);
      if (nodePid === undefined) throw new Error(`npm start runs no ${MAIN}:\n${output}`);
      const exited = Promise.all([npmExited, processGone(nodePid)]).then(([code]) => code);
      return { child, output: () => output, url: api[1]!, redirectUrl: redirect[1]!, adminUrl: admin[1]!, nodePid, exited };
    }
    if (hasExited(child)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopNpmStart({ child, exited: npmExited });
  throw new Error(`npm start did not come up:\n${output}`);
}

/** Sends `signal` to every process of the group (npm, and the node process it started), as Ctrl-C does. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // the group is gone already
  }
}

/** SIGTERM to the group, SIGKILL after 15 s; resolves once npm has exited. */
export async function stopNpmStart(started: Pick<NpmStart, 'child' | 'exited'>): Promise<void> {
  if (hasExited(started.child)) {
    await started.exited;
    return;
  }
  signalGroup(started.child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(started.child, 'SIGKILL'), 15_000);
  await started.exited;
  clearTimeout(timer);
}

/** The pid of the node process running `mainScript` among `pid`'s descendants (npm starts it through a shell or directly). */
export function descendantRunning(pid: number, mainScript: string): number | undefined {
  for (const child of childrenOf(pid)) {
    // node with the script as an argument (a shell running `node <script>` holds it inside one argument).
    const [program, ...args] = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0');
    if (/(^|\/)node$/.test(program ?? '') && args.includes(mainScript)) return child;
    const deeper = descendantRunning(child, mainScript);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}
