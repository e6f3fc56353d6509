-- +goose Up
-- Tokens belong to whoever made them: created_by is the person whose session (or whose
-- token) made the token, NULL for tokens of the command line, the desktop window and
-- older versions. Removing that person from the project, or a role that no longer
-- holds every scope of the token, revokes it (service/members.go). It is set once, at
-- insert, and never changes, so the triggers of 00024 need not count it.
ALTER TABLE tokens ADD COLUMN created_by INTEGER REFERENCES users(id);

-- +goose Down
ALTER TABLE tokens DROP COLUMN created_by;
