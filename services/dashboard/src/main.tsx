import { render } from 'preact';
import { App } from './app.tsx';
import { ErrorBoundary } from './components/error-boundary.tsx';
import './styles.css';

// The views have a boundary of their own (app.tsx); this one keeps the header's and sign-in's errors off a blank page.
render(
  <ErrorBoundary>
    <App />
  </ErrorBoundary>,
  document.getElementById('app')!,
);
