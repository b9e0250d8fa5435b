-- The tables @effect/cluster 0.60.2's SqlMessageStorage creates on PostgreSQL (taken with pg_dump after its migrations
-- ran on a real server), with its two migrations marked as done. On PGlite its own migration never finishes: it sends
-- two CREATE INDEX statements as one prepared statement, which PGlite refuses ("cannot insert multiple commands into a
-- prepared statement"), and retries every second for ever inside the migration's transaction.
CREATE TABLE cluster_messages (
  id bigint PRIMARY KEY,
  rowid bigserial NOT NULL,
  message_id varchar(255) UNIQUE,
  shard_id varchar(50) NOT NULL,
  entity_type varchar(150) NOT NULL,
  entity_id varchar(255) NOT NULL,
  kind integer NOT NULL,
  tag varchar(50),
  payload text,
  headers text,
  trace_id varchar(32),
  span_id varchar(16),
  sampled boolean,
  processed boolean NOT NULL DEFAULT false,
  request_id bigint NOT NULL,
  reply_id bigint,
  last_reply_id bigint,
  last_read timestamp,
  deliver_at bigint
);
CREATE INDEX cluster_messages_request_id_idx ON cluster_messages (request_id);
CREATE INDEX cluster_messages_shard_idx ON cluster_messages (shard_id, processed, last_read, deliver_at);
CREATE TABLE cluster_replies (
  id bigint PRIMARY KEY,
  rowid bigserial NOT NULL,
  kind integer,
  request_id bigint NOT NULL,
  payload text NOT NULL,
  sequence integer,
  acked boolean NOT NULL DEFAULT false,
  UNIQUE (request_id, kind),
  UNIQUE (request_id, sequence)
);
CREATE INDEX cluster_replies_request_lookup_idx ON cluster_replies (request_id, kind, acked);
CREATE TABLE cluster_migrations (
  migration_id integer PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  name text NOT NULL
);
INSERT INTO cluster_migrations (migration_id, name) VALUES (1, 'create_tables'), (2, 'entity_type_size');
