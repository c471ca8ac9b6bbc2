import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { ApiFailure, api, unwrap } from '../api.ts';
import { explain } from '../components/error-box.tsx';
import { session } from '../session.ts';

/** Paste an API key; it is checked with GET /me and kept in sessionStorage for this tab only. */
export function SignInView({ notice }: { notice: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<ComponentChildren | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) return setError('Paste an API key (it starts with lr_live_).');
    setBusy(true);
    setError(null);
    try {
      const body = await unwrap(api.GET('/me', { headers: { Authorization: `Bearer ${trimmed}` } }));
      session.signIn(trimmed, body.data);
    } catch (err) {
      // A 429 says when the limit resets; a 503 or no connection, when to try again.
      setError(err instanceof ApiFailure ? (err.status === 401 ? 'That key is not valid: it is unknown or revoked.' : explain(err)) : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in" id="main">
      <form onSubmit={submit} aria-describedby="sign-in-help">
        <h1>linkroute</h1>
        <p id="sign-in-help">
          Sign in with an API key. It stays in this browser tab only and is forgotten when the tab closes. <code>npm start</code> prints the first key; make more with{' '}
          <code>npm run cli -- key create</code>.
        </p>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <label for="api-key">API key</label>
        <input id="api-key" name="apiKey" type="password" autocomplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} placeholder="lr_live_…" required />
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
