-- +goose Up
-- The append-only history of each datasource's compaction config, as
-- supervisor_specs is for specs: a config is appended only when it differs
-- from the latest, and the latest is the one in force.
CREATE TABLE compaction_configs (
    datasource text        NOT NULL,
    version    integer     NOT NULL CHECK (version >= 1),
    config     jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (datasource, version)
);

-- The compaction that replaced a segment (made it unused): the name its
-- new segments carry as sequence_name.
ALTER TABLE segments ADD COLUMN compacted_by text;

-- +goose Down
ALTER TABLE segments DROP COLUMN compacted_by;
DROP TABLE compaction_configs;
