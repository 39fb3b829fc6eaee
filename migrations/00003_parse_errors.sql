-- +goose Up
-- The latest unparseable rows of each supervisor (tuningConfig.
-- maxSavedParseExceptions of them), with where they were read.
CREATE TABLE parse_errors (
    id            bigserial   PRIMARY KEY,
    supervisor_id text        NOT NULL,
    datasource    text        NOT NULL,
    topic         text        NOT NULL,
    partition     integer     NOT NULL,
    "offset"      bigint      NOT NULL,
    error         text        NOT NULL,
    message       bytea       NOT NULL,
    truncated     boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (supervisor_id, topic, partition, "offset")
);
CREATE INDEX parse_errors_supervisor ON parse_errors (supervisor_id, id DESC);

-- +goose Down
DROP TABLE parse_errors;
