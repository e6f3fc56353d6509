-- +goose Up
-- When each agent last contacted agentdesk (an authenticated request or an open event
-- stream; issue 20): the UI's online / last seen. Written at most every 30 seconds per
-- agent, in the background. NULL: never seen since this was recorded.
ALTER TABLE agents ADD COLUMN last_seen_at TEXT;

-- +goose Down
ALTER TABLE agents DROP COLUMN last_seen_at;
