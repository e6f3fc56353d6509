-- +goose Up
-- The twin of SQLite's 00029: the person who made a token, NULL for tokens of the
-- command line, the desktop window and older versions. Set once, at insert, and never
-- changed, so the triggers of 00026 need not count it.
ALTER TABLE tokens ADD COLUMN created_by bigint REFERENCES users(id);

-- +goose Down
ALTER TABLE tokens DROP COLUMN created_by;
