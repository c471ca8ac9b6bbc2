-- QR codes of links. The image is not stored: it is re-rendered from these
-- parameters (deterministic), so a record stays small.
CREATE TABLE qr_codes (
  id                text PRIMARY KEY,
  workspace_id      text NOT NULL REFERENCES workspaces (id),
  link_id           text NOT NULL REFERENCES links (id),
  format            text NOT NULL CHECK (format IN ('png', 'svg')),
  size              integer NOT NULL CHECK (size BETWEEN 64 AND 2048),
  margin            integer NOT NULL CHECK (margin BETWEEN 0 AND 16),
  foreground        text NOT NULL,
  background        text NOT NULL,
  error_correction  text NOT NULL CHECK (error_correction IN ('L', 'M', 'Q', 'H')),
  encoded_url       text NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX qr_codes_link_created ON qr_codes (link_id, created_at DESC, id DESC);
