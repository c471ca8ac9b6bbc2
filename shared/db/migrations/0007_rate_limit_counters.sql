-- The rolling window's size per workspace, kept beside its hits so a request
-- costs one round trip and O(expired hits) work instead of a count over the whole
-- window (up to 10,000 rows on Enterprise). Invariant: rate_limit_windows.used =
-- the number of rate_limit_hits rows of that workspace; only take_rate_limit()
-- writes either table, under the window row's lock.
CREATE TABLE rate_limit_windows (
  workspace_id  text PRIMARY KEY REFERENCES workspaces (id),
  used          integer NOT NULL DEFAULT 0
);

INSERT INTO rate_limit_windows (workspace_id, used)
SELECT workspace_id, count(*) FROM rate_limit_hits GROUP BY workspace_id;

-- Counts one request against the workspace's window ending at p_now. `used` is the
-- window before this request; a refused request is not recorded (it does not push
-- the window out). Concurrent calls for one workspace, from any API instance,
-- queue on the window row, so the count is exact.
CREATE FUNCTION take_rate_limit(p_workspace text, p_limit integer, p_now timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, allowed boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_used integer;
  v_expired integer;
BEGIN
  SELECT w.used INTO v_used FROM rate_limit_windows w WHERE w.workspace_id = p_workspace FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limit_windows (workspace_id) VALUES (p_workspace) ON CONFLICT DO NOTHING;
    SELECT w.used INTO v_used FROM rate_limit_windows w WHERE w.workspace_id = p_workspace FOR UPDATE;
  END IF;
  WITH gone AS (
    DELETE FROM rate_limit_hits h WHERE h.workspace_id = p_workspace AND h.at <= p_now - interval '1 hour' RETURNING 1
  )
  SELECT count(*) INTO v_expired FROM gone;
  used := v_used - v_expired;
  allowed := used < p_limit;
  IF allowed THEN
    INSERT INTO rate_limit_hits (workspace_id, at) VALUES (p_workspace, p_now);
  END IF;
  UPDATE rate_limit_windows w SET used = take_rate_limit.used + CASE WHEN allowed THEN 1 ELSE 0 END
  WHERE w.workspace_id = p_workspace;
  SELECT min(h.at) INTO oldest FROM rate_limit_hits h WHERE h.workspace_id = p_workspace;
  RETURN NEXT;
END;
$$;
