-- The history sweep (services/webhooks/delivery-store.ts, sweep) deletes events that no
-- delivery refers to any more: each one is looked up in webhook_deliveries by event_id,
-- by the sweep's NOT EXISTS and by the foreign key's check, which the (endpoint_id,
-- event_id) index cannot serve, so every deleted event scanned the deliveries. The same
-- pair, event first, serves that and the fan-out's ON CONFLICT (endpoint_id, event_id).
-- The sweep walks events by age.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_event_id_key;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_endpoint UNIQUE (event_id, endpoint_id);
CREATE INDEX webhook_events_age ON webhook_events (created_at);
