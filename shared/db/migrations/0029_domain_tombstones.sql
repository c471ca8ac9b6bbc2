-- A hostname that was once verified stays a custom domain for the redirectors after its
-- domain is deleted or fails (a tombstone): its codes answer 404, never the default
-- domain's links of the same codes, which any workspace may hold (a takeover of the
-- old domain's links and QR codes). The snapshot marker of such a domain keeps its
-- hostname (services/api/snapshot/load-domain-markers.ts); a domain never verified (a
-- pending or losing claim) has none, as before, so no claim alone changes what a
-- hostname answers.
--   ever_verified: the domain was verified at some point. Kept by this trigger, not by
--                  the API, so the previous release's instances set it too during an
--                  upgrade (verified_at is cleared when a domain fails).
ALTER TABLE domains ADD COLUMN ever_verified boolean NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION domains_set_ever_verified() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.ever_verified := true;
  RETURN NEW;
END $$;

CREATE TRIGGER domains_ever_verified BEFORE INSERT OR UPDATE ON domains
  FOR EACH ROW WHEN (NEW.status = 'verified' AND NOT NEW.ever_verified)
  EXECUTE FUNCTION domains_set_ever_verified();

-- The domains verified before this migration: those verified now, deleted ones that
-- were (verified_at is kept on delete), and those a re-check failed (verified_at is
-- cleared then; the reason says so until a later verify replaces it).
UPDATE domains SET ever_verified = true
WHERE status = 'verified' OR verified_at IS NOT NULL OR failure_reason LIKE 'its TXT record was not found by the re-checks since %';

-- Their markers again, now as tombstones, for those deleted or failed.
SELECT snapshot_enqueue(id) FROM domains WHERE ever_verified AND (deleted_at IS NOT NULL OR status <> 'verified');
