-- Rate-limit tokens taken in blocks: an API instance takes several tokens of a
-- workspace's window in one round trip and spends them in memory, so a busy
-- workspace costs a write per block, not per request. A hit row now stands for
-- `n` requests (1 before this migration). Unspent tokens are given back as a row
-- of -unspent at the block's own time, so they leave the window together.
-- Invariant (as in 0007): rate_limit_windows.used = sum(n) of the workspace's rows;
-- only take_rate_tokens() writes either table, under the window row's lock.
ALTER TABLE rate_limit_hits ADD COLUMN n integer NOT NULL DEFAULT 1;

-- Against the workspace's window ending at p_now: gives back p_return tokens of the
-- block taken at p_return_at, then grants up to p_want tokens at p_now, fewer as the
-- window fills (at most an eighth of what is left, and at least 1 while any is), so
-- near the limit blocks shrink to single tokens. `used` is the window before the
-- grant; granted = 0 means the limit is reached.
CREATE FUNCTION take_rate_tokens(p_workspace text, p_limit integer, p_now timestamptz, p_want integer, p_return integer, p_return_at timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, granted integer)
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
    DELETE FROM rate_limit_hits h WHERE h.workspace_id = p_workspace AND h.at <= p_now - interval '1 hour' RETURNING h.n
  )
  SELECT coalesce(sum(gone.n), 0) INTO v_expired FROM gone;
  v_used := v_used - v_expired;
  -- A block already out of the window took its tokens with it.
  IF p_return > 0 AND p_return_at > p_now - interval '1 hour' THEN
    INSERT INTO rate_limit_hits (workspace_id, at, n) VALUES (p_workspace, p_return_at, -p_return);
    v_used := v_used - p_return;
  END IF;
  used := v_used;
  granted := CASE WHEN v_used >= p_limit OR p_want <= 0 THEN 0 ELSE LEAST(p_want, GREATEST(1, (p_limit - v_used) / 8)) END;
  IF granted > 0 THEN
    INSERT INTO rate_limit_hits (workspace_id, at, n) VALUES (p_workspace, p_now, granted);
  END IF;
  UPDATE rate_limit_windows w SET used = v_used + granted WHERE w.workspace_id = p_workspace;
  SELECT min(h.at) INTO oldest FROM rate_limit_hits h WHERE h.workspace_id = p_workspace AND h.n > 0;
  RETURN NEXT;
END;
$$;

-- The one-request form (0007's), kept for instances of the previous release during an upgrade.
DROP FUNCTION take_rate_limit(text, integer, timestamptz);
CREATE FUNCTION take_rate_limit(p_workspace text, p_limit integer, p_now timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, allowed boolean)
LANGUAGE sql AS $$
  SELECT t.used, t.oldest, t.granted > 0 FROM take_rate_tokens(p_workspace, p_limit, p_now, 1, 0, NULL) AS t
$$;
