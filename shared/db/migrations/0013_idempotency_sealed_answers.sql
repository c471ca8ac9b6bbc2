-- Idempotency answers are stored sealed from now on (AES-256-GCM under LINKROUTE_SECRET,
-- `v1.<iv>.<ciphertext+tag>`), because an answer may show a secret once: POST /webhooks
-- shows the endpoint's signing secret. Answers stored before were plain JSON text, and
-- those of POST /webhooks held a signing secret in the clear: they are dropped here
-- (a retry with such a key within its 24 h runs again). Other plain answers stay and are
-- replayed as they are until they expire.
DELETE FROM idempotency_keys WHERE response_body LIKE '%"secret":"whsec\_%';
COMMENT ON COLUMN idempotency_keys.response_body IS
  'The response body as sent, sealed (v1.<iv>.<ciphertext+tag>) when the API has LINKROUTE_SECRET; replayed byte for byte once opened';
