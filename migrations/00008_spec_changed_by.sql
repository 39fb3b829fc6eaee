-- +goose Up
-- Who made each spec version: a user (start, update) or the supervisor's
-- autoscaler, with why (the autoscaler's lag summary).
ALTER TABLE supervisor_specs
    ADD COLUMN changed_by text NOT NULL DEFAULT 'user',
    ADD COLUMN reason     text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE supervisor_specs DROP COLUMN reason, DROP COLUMN changed_by;
