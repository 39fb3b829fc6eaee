-- +goose Up
-- The append-only histories of each datasource's compaction config and
-- retention rules, as supervisor_specs is for specs: a version is appended
-- only when it differs from the latest, and the latest is the one in force.
CREATE TABLE compaction_configs (
    datasource text        NOT NULL,
    version    integer     NOT NULL CHECK (version >= 1),
    config     jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (datasource, version)
);
CREATE TABLE retention_rules (
    datasource text        NOT NULL,
    version    integer     NOT NULL CHECK (version >= 1),
    rules      jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (datasource, version)
);

-- compacted_by: the compaction that replaced a segment (the name its new
-- segments carry as sequence_name); dropped_by: the retention rules
-- ('v<N>') that dropped it. unused_at: when it stopped being used, from
-- which the kill's grace period counts. killed_at: when its file was
-- deleted.
ALTER TABLE segments ADD COLUMN compacted_by text;
ALTER TABLE segments ADD COLUMN dropped_by text;
ALTER TABLE segments ADD COLUMN unused_at timestamptz;
ALTER TABLE segments ADD COLUMN killed_at timestamptz;
CREATE INDEX segments_unused ON segments (datasource, unused_at) WHERE NOT used AND killed_at IS NULL;

-- +goose Down
DROP INDEX segments_unused;
ALTER TABLE segments DROP COLUMN killed_at;
ALTER TABLE segments DROP COLUMN unused_at;
ALTER TABLE segments DROP COLUMN dropped_by;
ALTER TABLE segments DROP COLUMN compacted_by;
DROP TABLE retention_rules;
DROP TABLE compaction_configs;
