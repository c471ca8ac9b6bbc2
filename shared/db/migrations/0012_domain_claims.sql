-- Several workspaces may claim a hostname while it is pending (a claim proves nothing
-- until its TXT record is found); Postgres lets only one of them hold it verified, so N
-- API instances verifying at once cannot make two owners. A workspace claims a hostname
-- once at a time.
DROP INDEX domains_hostname_live;
CREATE UNIQUE INDEX domains_hostname_verified ON domains (lower(hostname)) WHERE deleted_at IS NULL AND status = 'verified';
CREATE UNIQUE INDEX domains_workspace_hostname_live ON domains (workspace_id, lower(hostname)) WHERE deleted_at IS NULL;
CREATE INDEX domains_hostname ON domains (lower(hostname)) WHERE deleted_at IS NULL;

-- The domain itself goes to the snapshot too (a marker keyed by its id): redirectors
-- then know a verified hostname before it holds any link, and serve it only its links.
CREATE OR REPLACE FUNCTION snapshot_enqueue_domain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM snapshot_enqueue(OLD.id);
  PERFORM snapshot_enqueue(l.id) FROM links l WHERE l.domain_id = OLD.id;
  RETURN NULL;
END $$;

-- Markers for the domains verified before this migration.
SELECT snapshot_enqueue(id) FROM domains WHERE deleted_at IS NULL AND status = 'verified';
