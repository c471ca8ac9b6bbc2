import type { Me } from './api.ts';
import { changes } from './changes.ts';

/**
 * The signed-in API key lives in sessionStorage only: gone when the tab closes,
 * never in localStorage or a cookie, never sent anywhere but this origin's API.
 */
const KEY = 'linkroute.apiKey';
/** What GET /me said about the key, so a reload paints at once; it is asked again in the background. */
const ME = 'linkroute.me';

export interface SessionState {
  me: Me | null;
  /** Why the last session ended (a 401), shown on the sign-in form. */
  notice: string | null;
}

function storedMe(): Me | null {
  const text = sessionStorage.getItem(ME);
  if (!text || !sessionStorage.getItem(KEY)) return null;
  try {
    return JSON.parse(text) as Me;
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
}

let state: SessionState = { me: storedMe(), notice: null };
const sessionChanges = changes();
const emit = sessionChanges.emit;

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  state: (): SessionState => state,
  subscribe: sessionChanges.subscribe,
  signIn(key: string, me: Me): void {
    sessionStorage.setItem(KEY, key);
    session.restore(me);
  },
  /** The identity of the key kept in this tab, as GET /me answers it now. */
  restore(me: Me): void {
    sessionStorage.setItem(ME, JSON.stringify(me));
    state = { me, notice: null };
    emit();
  },
  signOut(notice: string | null = null): void {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ME);
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
