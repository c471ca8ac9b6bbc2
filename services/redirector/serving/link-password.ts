import type { CompiledLink } from '../../../shared/routing/index.ts';

/**
 * The scrypt hash of a password-protected link. CompiledLink does not carry it yet
 * (`passwordHash: string | null` is to be added to compileLink and the API's snapshot
 * publishing); until then this reads the field if present. One line to change.
 */
export function passwordHashOf(link: CompiledLink): string | null {
  const hash = (link as CompiledLink & { passwordHash?: unknown }).passwordHash;
  return typeof hash === 'string' && hash !== '' ? hash : null;
}
