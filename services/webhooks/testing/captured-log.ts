import type { Logger } from '../../../shared/logger.ts';

/**
 * A logger that keeps its lines (`level message {fields}`, stacks left out), for tests to
 * assert on and to show the last ten in a failure message (`recent()`).
 */
export function capturedLog(): { logger: Logger; lines: string[]; recent: () => string } {
  const lines: string[] = [];
  const logger = Object.fromEntries(
    (['debug', 'info', 'warn', 'error'] as const).map((level) => [
      level,
      (msg: string, fields?: Record<string, unknown>) => {
        const { stack: _stack, ...rest } = fields ?? {};
        lines.push(`${level} ${msg} ${JSON.stringify(rest)}`);
      },
    ]),
  ) as unknown as Logger;
  return { logger, lines, recent: () => lines.slice(-10).join('\n') };
}
