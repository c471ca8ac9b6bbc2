import type { Me } from './api.ts';

/**
 * The signed-in API key lives in sessionStorage only: gone when the tab closes,
 * never in localStorage or a cookie, never sent anywhere but this origin's API.
 */
const KEY = 'linkroute.apiKey';

export interface SessionState {
  me: Me | null;
  /** Why the last session ended (a 401), shown on the sign-in form. */
  notice: string | null;
}

let state: SessionState = { me: null, notice: null };
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  state: (): SessionState => state,
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  signIn(key: string, me: Me): void {
    sessionStorage.setItem(KEY, key);
    state = { me, notice: null };
    emit();
  },
  /** Restores the identity of a key kept from earlier in this tab. */
  restore(me: Me): void {
    state = { me, notice: null };
    emit();
  },
  signOut(notice: string | null = null): void {
    sessionStorage.removeItem(KEY);
    state = { me: null, notice };
    emit();
  },
  expire(message: string): void {
    if (sessionStorage.getItem(KEY)) session.signOut(`Signed out: ${message}. Sign in with a valid key.`);
  },
  can(scope: string): boolean {
    return state.me?.key.scopes.includes(scope as never) ?? false;
  },
};
