-- +goose Up
-- The query granularity a segment's row times are truncated to: the
-- spec's when a publish wrote it, the compaction config's when a re-rollup
-- did. NULL: written before this column, so unknown (compaction treats it
-- as none and re-rolls the segment up when its config asks for a coarser
-- granularity).
ALTER TABLE segments ADD COLUMN query_granularity text;

-- +goose Down
ALTER TABLE segments DROP COLUMN query_granularity;
