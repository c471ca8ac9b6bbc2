import { useEffect } from 'preact/hooks';

/**
 * The tab's title names the view (WCAG 2.4.2): it is what a screen reader reads
 * first, and what the history and tab list show. null leaves it to another view.
 */
export function useTitle(title: string | null): void {
  useEffect(() => {
    if (title !== null) document.title = `${title} · linkroute`;
  }, [title]);
}
