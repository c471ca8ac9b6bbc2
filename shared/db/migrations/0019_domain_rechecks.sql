-- Verified domains are checked again daily (services/api/domain-rechecks.ts): a domain
-- whose TXT record is gone for the grace period loses its verification, so a hostname
-- is never held by a workspace that no longer controls its DNS (the new owner could not
-- claim it: 409 while another workspace holds it verified).
--   checked_at:    the last DNS check of the domain, by a verify request or a re-check;
--                  a re-check claims the domain by setting it, so N API instances check
--                  each domain once per period.
--   failing_since: the first failed re-check of a verified domain since its record was
--                  last found; null while it is found.
ALTER TABLE domains ADD COLUMN checked_at timestamptz;
ALTER TABLE domains ADD COLUMN failing_since timestamptz;
CREATE INDEX domains_recheck_due ON domains (checked_at NULLS FIRST) WHERE status = 'verified' AND deleted_at IS NULL;

-- The links' snapshot entries change only with these columns: a re-check (checked_at,
-- failing_since) must not republish every link of the domain daily.
DROP TRIGGER domains_snapshot ON domains;
CREATE TRIGGER domains_snapshot AFTER UPDATE OF status, hostname, deleted_at OR DELETE ON domains
  FOR EACH ROW EXECUTE FUNCTION snapshot_enqueue_domain();
