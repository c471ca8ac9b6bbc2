-- Two lanes in the snapshot outbox: a direct change goes ahead of a fan-out.
--   direct:  a link written (any statement on links), a link rule, a domain's own marker.
--   fan-out: the links a change queues beside the rows it wrote: every live link of a
--            campaign when a campaign-wide rule changes, every link of a domain when its
--            status, hostname or deletion changes, and the seeding of an empty bucket.
-- The publishers took the oldest rows first (ORDER BY queued_at), so a campaign-wide
-- rule on a 20,000-link campaign put 20,000 rows ahead of every change made after it,
-- in any workspace: an unrelated PATCH was live seconds later, not within 100 ms.
-- They now take direct rows first and fill a batch up to a bound with fan-out rows
-- (services/api/snapshot/outbox-publisher.ts), so a fan-out drains while direct
-- changes are few and a direct change waits for at most one batch of it.
--
-- A row keeps the faster lane: a direct change to a link with a fan-out row queued
-- moves it to the direct lane, a fan-out over a queued direct row leaves it there.
-- The column's default is constant: adding it rewrites no row.
ALTER TABLE snapshot_outbox ADD COLUMN IF NOT EXISTS fan_out boolean NOT NULL DEFAULT false;

-- The take walks each lane in queue order (0021's index, by lane).
DROP INDEX IF EXISTS snapshot_outbox_queued;
CREATE INDEX IF NOT EXISTS snapshot_outbox_lane ON snapshot_outbox (fan_out, queued_at);

-- Direct: the one-row enqueue (a link rule's link, a domain's marker).
CREATE OR REPLACE FUNCTION snapshot_enqueue(link text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO snapshot_outbox (link_id, generation) VALUES (link, nextval('snapshot_outbox_generation_seq'))
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp(), fan_out = false;
$$;

-- Fan-out, one row (the seeding of an empty bucket).
CREATE OR REPLACE FUNCTION snapshot_enqueue_fan_out(link text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO snapshot_outbox (link_id, generation, fan_out) VALUES (link, nextval('snapshot_outbox_generation_seq'), true)
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp();
$$;

-- Direct: every link a statement wrote (0014's statement-level trigger, same statement).
CREATE OR REPLACE FUNCTION snapshot_enqueue_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_outbox (link_id, generation)
  SELECT n.id, nextval('snapshot_outbox_generation_seq') FROM (SELECT DISTINCT id FROM new_rows) n
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp(), fan_out = false;
  RETURN NULL;
END $$;

-- A link rule: its link, direct. A campaign-wide rule: every live link of its campaign,
-- fan-out, in one statement (was one snapshot_enqueue() call a link).
CREATE OR REPLACE FUNCTION snapshot_enqueue_rule() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT * FROM (SELECT NEW.link_id AS link_id, NEW.campaign_id AS campaign_id WHERE TG_OP <> 'DELETE'
                          UNION SELECT OLD.link_id, OLD.campaign_id WHERE TG_OP <> 'INSERT') s LOOP
    IF r.link_id IS NOT NULL THEN
      PERFORM snapshot_enqueue(r.link_id);
    ELSE
      INSERT INTO snapshot_outbox (link_id, generation, fan_out)
      SELECT l.id, nextval('snapshot_outbox_generation_seq'), true FROM links l WHERE l.campaign_id = r.campaign_id AND l.deleted_at IS NULL
      ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp();
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- A domain: its marker, direct; its links, fan-out (0012's trigger function, same rows).
CREATE OR REPLACE FUNCTION snapshot_enqueue_domain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM snapshot_enqueue(OLD.id);
  INSERT INTO snapshot_outbox (link_id, generation, fan_out)
  SELECT l.id, nextval('snapshot_outbox_generation_seq'), true FROM links l WHERE l.domain_id = OLD.id
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp();
  RETURN NULL;
END $$;

-- Direct: every link a statement hard-deleted (0031), as every link a statement wrote.
CREATE OR REPLACE FUNCTION snapshot_enqueue_deleted_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_outbox (link_id, generation)
  SELECT o.id, nextval('snapshot_outbox_generation_seq') FROM (SELECT DISTINCT id FROM old_rows) o
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp(), fan_out = false;
  RETURN NULL;
END $$;
