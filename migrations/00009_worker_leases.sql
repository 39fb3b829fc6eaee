-- +goose Up
-- One row per live worker process (internal/liveness): renewed every
-- second until expires_at, with the activities it runs and the key of the
-- session advisory lock it holds while its connection lives. Any live
-- worker takes a lapsed lease's activities over and deletes the row.
CREATE TABLE worker_leases (
    worker_id   text        PRIMARY KEY,
    identity    text        NOT NULL,
    namespace   text        NOT NULL,
    task_queue  text        NOT NULL,
    lock_key    bigint      NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    renewed_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    activities  jsonb       NOT NULL DEFAULT '[]'
);
CREATE INDEX worker_leases_expires_at ON worker_leases (expires_at);

-- +goose Down
DROP TABLE worker_leases;
