-- One row per counted API request, for an exact rolling one-hour window per
-- workspace shared by every API instance. Rows older than the window are deleted
-- as requests come in.
CREATE TABLE rate_limit_hits (
  workspace_id  text NOT NULL REFERENCES workspaces (id),
  at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX rate_limit_hits_workspace_at ON rate_limit_hits (workspace_id, at);
