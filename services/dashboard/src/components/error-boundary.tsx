import { Component, type ComponentChildren } from 'preact';

interface State {
  error: Error | null;
}

/**
 * A render that throws (an answer in a shape this build does not know, a bug) is
 * not an HTTP failure, so no ErrorBox shows it: without this, Preact would leave
 * the page blank. The boundary shows what happened, with a retry that renders its
 * children afresh (their loads start again) and a full reload; a navigation
 * (`resetKey`) starts afresh too.
 */
export class ErrorBoundary extends Component<{ children: ComponentChildren; resetKey?: string }, State> {
  override state: State = { error: null };

  static override getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: unknown): void {
    // Handled (shown below); the console keeps the stack for whoever reports it.
    console.error(error);
  }

  override componentDidUpdate(previous: { resetKey?: string }): void {
    if (this.state.error && previous.resetKey !== this.props.resetKey) this.setState({ error: null });
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div class="error-box" role="alert" data-status="render">
        <p>
          <strong>This page could not be shown.</strong> {error.message}
        </p>
        <p>The rest of the dashboard works: try again, reload the page, or go to another section.</p>
        <div class="actions start">
          <button type="button" class="primary" onClick={() => this.setState({ error: null })}>
            Try again
          </button>
          <button type="button" onClick={() => location.reload()}>
            Reload the page
          </button>
        </div>
      </div>
    );
  }
}
