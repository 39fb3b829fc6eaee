-- +goose Up
-- Requests to a running consume stream to return now, by its wake key
-- (task-group workflow, run and activity). A row makes the request
-- durable; a NOTIFY on handoff_wakeup makes it immediate.
CREATE TABLE consume_wakeups (
    wake_key     text        PRIMARY KEY,
    requested_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE consume_wakeups;
