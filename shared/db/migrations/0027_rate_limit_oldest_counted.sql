-- `oldest` (X-RateLimit-Reset, and Retry-After from it) is the time of the oldest
-- request still counted. It was the earliest row with n > 0, but a block given back
-- whole leaves its row (T1, +k) beside its give-back (T1, -k), which together count
-- nothing (a give-back is stamped with its block's own time): after rows (T1, +1),
-- (T1, -1), (T2, +1), Reset named T1 + 1 hour, and a client retrying then, as told,
-- was refused again until T2 + 1 hour. Now it is the earliest time whose rows sum
-- above 0. Walked in `at` order on rate_limit_hits_workspace_at and stopped at the
-- first such time, so it reads only the blocks given back whole before it.
--
-- The same arguments and result as 0023, so CREATE OR REPLACE: databases migrated
-- before get it, and instances of the previous release call it unchanged. Invariants
-- as in 0011: rate_limit_windows.used = sum(n) of the workspace's rows; only
-- take_rate_tokens() writes either table, under the window row's lock.
CREATE OR REPLACE FUNCTION take_rate_tokens(p_workspace text, p_limit integer, p_now timestamptz, p_want integer, p_return integer, p_return_at timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, granted integer, at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  v_used integer;
  v_expired integer;
  v_now timestamptz;
BEGIN
  SELECT w.used INTO v_used FROM rate_limit_windows w WHERE w.workspace_id = p_workspace FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO rate_limit_windows (workspace_id) VALUES (p_workspace) ON CONFLICT DO NOTHING;
    SELECT w.used INTO v_used FROM rate_limit_windows w WHERE w.workspace_id = p_workspace FOR UPDATE;
  END IF;
  v_now := coalesce(p_now, clock_timestamp());
  WITH gone AS (
    DELETE FROM rate_limit_hits h WHERE h.workspace_id = p_workspace AND h.at <= v_now - interval '1 hour' RETURNING h.n
  )
  SELECT coalesce(sum(gone.n), 0) INTO v_expired FROM gone;
  v_used := v_used - v_expired;
  -- A block already out of the window took its tokens with it.
  IF p_return > 0 AND p_return_at > v_now - interval '1 hour' THEN
    INSERT INTO rate_limit_hits (workspace_id, at, n) VALUES (p_workspace, p_return_at, -p_return);
    v_used := v_used - p_return;
  END IF;
  used := v_used;
  granted := CASE WHEN v_used >= p_limit OR p_want <= 0 THEN 0 ELSE LEAST(p_want, GREATEST(1, (p_limit - v_used) / 8)) END;
  IF granted > 0 THEN
    INSERT INTO rate_limit_hits (workspace_id, at, n) VALUES (p_workspace, v_now, granted);
  END IF;
  UPDATE rate_limit_windows w SET used = v_used + granted WHERE w.workspace_id = p_workspace;
  -- NULL when nothing is counted (no row found).
  SELECT h.at INTO oldest FROM rate_limit_hits h WHERE h.workspace_id = p_workspace
  GROUP BY h.at HAVING sum(h.n) > 0 ORDER BY h.at LIMIT 1;
  at := v_now;
  RETURN NEXT;
END;
$$;
