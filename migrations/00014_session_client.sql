-- +goose Up
-- A person's list of their own sessions (issue 18) says where each one signed in from:
-- the browser's User-Agent (cut to 200 characters) and the client address (behind a
-- trusted proxy, the X-Forwarded-For client). NULL for sessions begun before.
ALTER TABLE sessions ADD COLUMN user_agent TEXT;
ALTER TABLE sessions ADD COLUMN address TEXT;

-- +goose Down
ALTER TABLE sessions DROP COLUMN address;
ALTER TABLE sessions DROP COLUMN user_agent;
