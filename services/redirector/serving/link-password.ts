import type { CompiledLink } from '../../../shared/routing/index.ts';

/** The scrypt hash of a password-protected link; null (never '') when it has none. */
export function passwordHashOf(link: CompiledLink): string | null {
  const hash = link.passwordHash;
  return typeof hash === 'string' && hash !== '' ? hash : null;
}
