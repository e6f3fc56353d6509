-- +goose Up
-- Events and activity are pruned in rowid order (they are appended in time order), so
-- their indexes on the time only cost an extra B-tree update on every write.
DROP INDEX events_at;
DROP INDEX activity_at;

-- +goose Down
CREATE INDEX events_at ON events(at);
CREATE INDEX activity_at ON activity(at);
