-- Tags (stored normalised by the API: lowercase, trimmed, single spaces, no
-- duplicates) and query forwarding on links. forward_query: 'on' appends the
-- visitor's query parameters the destination does not already have, 'off' never,
-- 'override_utm' also lets the visitor's utm_* values replace the destination's.
ALTER TABLE links
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
  ADD COLUMN forward_query text NOT NULL DEFAULT 'on' CHECK (forward_query IN ('on', 'off', 'override_utm'));

-- `?tag=a,b` (any of the tags) and the per-workspace tag list read live links only.
CREATE INDEX links_tags ON links USING gin (tags) WHERE deleted_at IS NULL;
