-- An order id is claimed before its conversion is published to the bus and marked
-- published after. A claim left unpublished (the API died in between, during a NATS
-- outage, say) is taken over by a retry once it is older than a publish can take,
-- instead of answering `duplicate: true` for a conversion that was never recorded.
-- Every claim made before this migration was published.
ALTER TABLE conversion_orders ADD COLUMN published_at timestamptz DEFAULT now();
ALTER TABLE conversion_orders ALTER COLUMN published_at DROP DEFAULT;
ALTER TABLE conversion_orders ADD COLUMN claimed_at timestamptz NOT NULL DEFAULT now();
