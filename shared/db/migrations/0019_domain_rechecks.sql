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

-- The links' snapshot entries change only when one of these columns does: a re-check
-- (checked_at, failing_since) must not republish every link of the domain daily. WHEN,
-- not UPDATE OF: an UPDATE naming status without changing it (a re-check's one statement)
-- would fire that.
DROP TRIGGER domains_snapshot ON domains;
CREATE TRIGGER domains_snapshot AFTER UPDATE ON domains
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.hostname IS DISTINCT FROM NEW.hostname OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION snapshot_enqueue_domain();
CREATE TRIGGER domains_snapshot_deleted AFTER DELETE ON domains
  FOR EACH ROW EXECUTE FUNCTION snapshot_enqueue_domain();
