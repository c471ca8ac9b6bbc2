import type { Page } from 'playwright-core';

// The function given to page.evaluate runs in the browser; this Node program has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, getComputedStyle: any;

export interface Focused {
  tag: string;
  /** The accessible name as a user hears it: aria-label, else its label, else its text. */
  name: string;
  /** Whether the focus is drawn (an outline), as :focus-visible styles it for keyboard users. */
  outlined: boolean;
}

export function focused(page: Page): Promise<Focused> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return { tag: 'body', name: '', outlined: false };
    const label = el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : undefined;
    const name = (el.getAttribute('aria-label') ?? label ?? el.textContent ?? '').replace(/\s+/g, ' ').trim();
    const style = getComputedStyle(el);
    return { tag: el.tagName.toLowerCase(), name, outlined: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 };
  });
}

/**
 * Presses Tab (or Shift+Tab) until the focused control's accessible name matches,
 * as a keyboard user moves through a page; fails when `max` presses do not get there.
 */
export async function tabTo(page: Page, name: RegExp, options: { backwards?: boolean; max?: number } = {}): Promise<Focused> {
  const max = options.max ?? 200;
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(options.backwards ? 'Shift+Tab' : 'Tab');
    const now = await focused(page);
    if (name.test(now.name)) return now;
    seen.push(`${now.tag}:${now.name.slice(0, 40)}`);
  }
  throw new Error(`${name} not reached in ${max} presses of ${options.backwards ? 'Shift+Tab' : 'Tab'}; focus went through: ${seen.join(' | ')}`);
}
