-- An order id is claimed before its conversion is published to the bus. A claim whose
-- conversion is not on the bus yet carries the time it was made in `unpublished_since`,
-- cleared once it is published. One left set (the API died in between, during a NATS
-- outage, say) is taken over by a retry once it is older than a publish can take,
-- instead of answering `duplicate: true` for a conversion that was never recorded.
-- NULL means published: every claim made before this migration, and the claims of an
-- older API still running beside newer ones in a rolling upgrade (it publishes before it
-- answers, and knows nothing of this column).
ALTER TABLE conversion_orders ADD COLUMN unpublished_since timestamptz;
