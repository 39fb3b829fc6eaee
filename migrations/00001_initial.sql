-- +goose Up
-- Segments published to deep storage. A row appears in the same transaction
-- that moves the datasource's offsets past the rows the segment holds.
CREATE TABLE segments (
    id             text PRIMARY KEY,
    datasource     text        NOT NULL,
    interval_start timestamptz NOT NULL,
    interval_end   timestamptz NOT NULL,
    version        text        NOT NULL,
    sequence_name  text        NOT NULL,
    rows           bigint      NOT NULL,
    bytes          bigint      NOT NULL,
    uri            text        NOT NULL,
    checksum       text        NOT NULL,
    used           boolean     NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX segments_datasource_interval ON segments (datasource, interval_start, interval_end) WHERE used;

-- The next offset to read per partition: where the next sequence must start.
CREATE TABLE datasource_offsets (
    datasource  text        NOT NULL,
    topic       text        NOT NULL,
    partition   integer     NOT NULL,
    next_offset bigint      NOT NULL CHECK (next_offset >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (datasource, topic, partition)
);

-- The idempotency record of a publish: a retried publish of a recorded
-- sequence succeeds without writing anything again.
CREATE TABLE published_sequences (
    sequence_name text PRIMARY KEY,
    supervisor_id text        NOT NULL,
    datasource    text        NOT NULL,
    topic         text        NOT NULL,
    task_group    integer     NOT NULL,
    sequence_id   integer     NOT NULL,
    start_offsets jsonb       NOT NULL,
    end_offsets   jsonb       NOT NULL,
    segment_ids   text[]      NOT NULL,
    rows          bigint      NOT NULL,
    published_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX published_sequences_group ON published_sequences (supervisor_id, task_group, sequence_id);

-- +goose Down
DROP TABLE published_sequences;
DROP TABLE datasource_offsets;
DROP TABLE segments;
