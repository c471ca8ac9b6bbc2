import { useEffect, useState } from 'preact/hooks';

/**
 * The one polite live region of the dashboard (WCAG 4.1.3): what changed without
 * a page load (a link deleted, a filter applied) is said here, once, without
 * moving focus. It is rendered once by the shell, before any message, as screen
 * readers only announce changes to a region already in the page.
 */
let say: ((text: string) => void) | null = null;

export function announce(text: string): void {
  say?.(text);
}

export function StatusRegion() {
  const [text, setText] = useState('');
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    say = (next) => {
      clearTimeout(timer);
      // Emptied first: the same words again ("Filters cleared" twice) are a change too.
      setText('');
      timer = setTimeout(() => setText(next), 100);
    };
    return () => {
      clearTimeout(timer);
      say = null;
    };
  }, []);
  return (
    <p class="visually-hidden" role="status" data-announcer>
      {text}
    </p>
  );
}
