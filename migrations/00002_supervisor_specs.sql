-- +goose Up
-- The append-only history of the specs a supervisor accepted. A spec is
-- appended only when it differs from the latest one, so every version is a
-- real change; version 1 is the spec the supervisor was created with.
CREATE TABLE supervisor_specs (
    supervisor_id text        NOT NULL,
    version       integer     NOT NULL CHECK (version >= 1),
    spec          jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (supervisor_id, version)
);

-- +goose Down
DROP TABLE supervisor_specs;
