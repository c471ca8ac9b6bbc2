import { href } from '../router.ts';

/** A link's tags, each a link to the links list filtered by it. */
export function TagLinks({ tags }: { tags: string[] }) {
  if (tags.length === 0) return <span class="muted">None</span>;
  return (
    <ul class="tag-links" data-tags>
      {tags.map((tag) => (
        <li key={tag}>
          <a class="tag" href={href('links', { tag })} aria-label={`Links tagged ${tag}`}>
            {tag}
          </a>
        </li>
      ))}
    </ul>
  );
}
