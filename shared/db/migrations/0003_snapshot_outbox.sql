-- Redirectors serve a snapshot of compiled links published to a NATS KV bucket.
-- Triggers queue every link whose compiled form may have changed, in the same
-- transaction as the change, whoever made it (any API instance, the CLI, SQL);
-- publishers drain the queue, so a crash between commit and publish loses nothing.
CREATE SEQUENCE snapshot_version_seq;
CREATE SEQUENCE snapshot_outbox_generation_seq;

CREATE TABLE snapshot_outbox (
  link_id     text PRIMARY KEY,
  -- Bumped on every enqueue: a publisher removes only the generation it published.
  generation  bigint NOT NULL,
  queued_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION snapshot_enqueue(link text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO snapshot_outbox (link_id, generation) VALUES (link, nextval('snapshot_outbox_generation_seq'))
  ON CONFLICT (link_id) DO UPDATE SET generation = EXCLUDED.generation, queued_at = clock_timestamp();
$$;

CREATE FUNCTION snapshot_enqueue_link() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM snapshot_enqueue(NEW.id);
  RETURN NULL;
END $$;

CREATE TRIGGER links_snapshot AFTER INSERT OR UPDATE ON links
  FOR EACH ROW EXECUTE FUNCTION snapshot_enqueue_link();

-- A link rule changes its link; a campaign-wide rule changes every live link of its campaign.
CREATE FUNCTION snapshot_enqueue_rule() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT * FROM (SELECT NEW.link_id AS link_id, NEW.campaign_id AS campaign_id WHERE TG_OP <> 'DELETE'
                          UNION SELECT OLD.link_id, OLD.campaign_id WHERE TG_OP <> 'INSERT') s LOOP
    IF r.link_id IS NOT NULL THEN
      PERFORM snapshot_enqueue(r.link_id);
    ELSE
      PERFORM snapshot_enqueue(l.id) FROM links l WHERE l.campaign_id = r.campaign_id AND l.deleted_at IS NULL;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER rules_snapshot AFTER INSERT OR UPDATE OR DELETE ON rules
  FOR EACH ROW EXECUTE FUNCTION snapshot_enqueue_rule();

-- A domain's verification or deletion decides whether its links resolve.
CREATE FUNCTION snapshot_enqueue_domain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM snapshot_enqueue(l.id) FROM links l WHERE l.domain_id = OLD.id;
  RETURN NULL;
END $$;

CREATE TRIGGER domains_snapshot AFTER UPDATE OR DELETE ON domains
  FOR EACH ROW EXECUTE FUNCTION snapshot_enqueue_domain();
