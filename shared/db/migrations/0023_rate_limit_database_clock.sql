-- The rolling window on one clock, Postgres's: API instances passed their own time
-- as p_now, so with clocks δ apart one instance's blocks were stamped δ off from
-- another's and expired δ early or late (an instance far ahead expired everyone's
-- hits at once). Now p_now NULL means the database's time, and the function returns
-- the time it used (`at`), so the caller gives a block's unspent tokens back at the
-- block's own database time. Invariants as in 0011: rate_limit_windows.used =
-- sum(n) of the workspace's rows; only take_rate_tokens() writes either table,
-- under the window row's lock.
--
-- The time is clock_timestamp() read once the window row is locked, not now() (the
-- caller's transaction start): calls for a workspace are serialised by that lock, so
-- its rows are stamped in the order they were granted, a call that waited for the
-- lock is not backdated by its wait, and a caller inside a long transaction does not
-- stamp its transaction's start.
--
-- Same six arguments, so instances of the previous release (their own p_now; they
-- read used, oldest, granted) keep working during a rolling upgrade, their hits still
-- on their own clocks until they are replaced. A new result column needs DROP +
-- CREATE; take_rate_limit() (a SQL function, resolved when called) calls the new one.
DROP FUNCTION take_rate_tokens(text, integer, timestamptz, integer, integer, timestamptz);

-- Against the workspace's window ending at p_now (NULL: the database's time): gives
-- back p_return tokens of the block taken at p_return_at, then grants up to p_want
-- tokens at that time, fewer as the window fills (at most an eighth of what is left,
-- and at least 1 while any is). `used` is the window before the grant; granted = 0
-- means the limit is reached; `at` is the time the window ended at and the grant is
-- stamped with.
CREATE FUNCTION take_rate_tokens(p_workspace text, p_limit integer, p_now timestamptz, p_want integer, p_return integer, p_return_at timestamptz)
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
  SELECT min(h.at) INTO oldest FROM rate_limit_hits h WHERE h.workspace_id = p_workspace AND h.n > 0;
  at := v_now;
  RETURN NEXT;
END;
$$;
