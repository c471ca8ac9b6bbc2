import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { ApiFailure, api, unwrap } from '../api.ts';
import { explain } from '../components/error-box.tsx';
import { session } from '../session.ts';
import { focusElement } from '../focus.ts';
import { useTitle } from '../document-title.ts';

/** Paste an API key; it is checked with GET /me and kept in sessionStorage for this tab only. */
export function SignInView({ notice }: { notice: string | null }) {
  useTitle('Sign in');
  const [key, setKey] = useState('');
  const [error, setError] = useState<ComponentChildren | null>(null);
  const [busy, setBusy] = useState(false);
  // A refused key: focus goes back to the field, which now reads as invalid with the reason (WCAG 3.3.1).
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (error) focusElement(input.current);
  }, [error]);

  async function submit(event: Event) {
    event.preventDefault();
    if (busy) return;
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
        <input
          id="api-key"
          ref={input}
          name="apiKey"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          placeholder="lr_live_…"
          required
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'api-key-error' : undefined}
        />
        {error && (
          // No alert role: focus moves to the field, which reads this as its description.
          <p id="api-key-error" class="field-error">
            {error}
          </p>
        )}
        {/* aria-disabled, not disabled, while checking: the button keeps focus, a second press does nothing. */}
        <button type="submit" class="primary" aria-disabled={busy ? 'true' : undefined}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
