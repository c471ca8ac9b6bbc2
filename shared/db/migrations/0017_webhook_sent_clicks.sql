-- The clicks each endpoint's link.clicked events already hold, written in the same
-- statement as those events. A NATS server that crashed may hand out again, as first
-- deliveries, click messages it had acknowledged; their clicks are found here and left
-- out, so a click reaches an endpoint in one event (one webhook-id), retried as that
-- event, never in a second one. Kept a day: such redeliveries come within minutes.
CREATE TABLE webhook_sent_clicks (
  endpoint_id  text NOT NULL,
  click_id     text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, click_id)
);
CREATE INDEX webhook_sent_clicks_age ON webhook_sent_clicks (created_at);
