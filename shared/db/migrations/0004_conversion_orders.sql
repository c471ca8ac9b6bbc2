-- A repeated orderId in a workspace is the same conversion: the first one's id
-- answers every retry of a postback (DESIGN.md "Conversions").
CREATE TABLE conversion_orders (
  workspace_id   text NOT NULL REFERENCES workspaces (id),
  order_id       text NOT NULL,
  conversion_id  text NOT NULL,
  link_id        text NOT NULL,
  campaign_id    text NOT NULL,
  attributed     boolean NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, order_id)
);
