-- A links row deleted with SQL (an operator's DELETE FROM links: the API only sets
-- deleted_at) is queued for the snapshot like any other change (0003: whoever made it),
-- so the publisher puts its removal (loadCompiledLinks answers null for an id with no
-- row). 0014 queued inserts and updates only: such a link stayed live in the bucket, and
-- in every redirector, for good. Rules (0003) and domains (0019) are queued on delete too.
--
-- Snapshot only, no link.deleted webhook event: that event announces the API's delete,
-- with the row as it is after it (deletedAt set), and 0010's update trigger sends it
-- for a SQL UPDATE setting deleted_at too, which is how to delete a link with its event.
-- A hard delete takes a row out from under the API, mostly one deleted already (a
-- purge: its event was sent then).
--
-- Same queueing as 0014's snapshot_enqueue_links(), which reads new_rows: every deleted
-- id with a new generation. A row already deleted through the API (its entry null
-- already) is queued too, and published null again: harmless.
CREATE FUNCTION snapshot_enqueue_deleted_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_outbox (link_id, generation)
  SELECT o.id, nextval('snapshot_outbox_generation_seq') FROM (SELECT DISTINCT id FROM old_rows) o
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp();
  RETURN NULL;
END $$;

CREATE TRIGGER links_snapshot_deleted AFTER DELETE ON links
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION snapshot_enqueue_deleted_links();
