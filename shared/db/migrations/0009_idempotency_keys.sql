-- Idempotency-Key on POST and PATCH (Stripe's semantics): the first request with a
-- key runs, later ones with the same key and the same request get its response
-- (status and body) for 24 h. Shared by every API instance. While the first runs,
-- response_status is NULL and locked_until bounds how long it may hold the key
-- (a crashed instance's claim lapses then).
CREATE TABLE idempotency_keys (
  workspace_id     text NOT NULL REFERENCES workspaces (id),
  key              text NOT NULL,
  -- SHA-256 of method, path, query and the body as canonical JSON.
  fingerprint      text NOT NULL,
  response_status  integer,
  -- The response body as sent, JSON text (replayed byte for byte).
  response_body    text,
  locked_until     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
