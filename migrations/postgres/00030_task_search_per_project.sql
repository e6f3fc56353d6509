-- +goose Up
-- A task search costs what the caller's project holds, not the whole database (issue 37
-- item 9; SQLite's twin says why). A prefix query ('a':*) on the GIN index tasks_search
-- reads every key with that prefix in the whole index: the index now holds every word
-- behind its project's tag (store.searchTag: 12 letters, g-p standing for the digits of
-- the MD5 of the project's id, so that tag and word parse as one word), and a search asks
-- for its project's tag in front of each word: it reads only its own project's keys.
-- +goose StatementBegin
CREATE FUNCTION task_search_tag(project_id text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN translate(left(md5(project_id), 12), '0123456789', 'ghijklmnop');
-- +goose StatementEnd
-- The text the index holds: the words of summary and details (runs of letters and
-- digits, as before), each behind the project's tag.
-- +goose StatementBegin
CREATE FUNCTION task_search_words(project_id text, summary text, details text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN task_search_tag(project_id) || regexp_replace((summary || ' ' || details) COLLATE "und-x-icu",
    '[^[:alnum:]]+', ' ' || task_search_tag(project_id), 'g');
-- +goose StatementEnd
DROP INDEX tasks_search;
CREATE INDEX tasks_search ON tasks USING gin (to_tsvector('agentdesk_simple', task_search_words(project_id, summary, details)));

-- +goose Down
DROP INDEX tasks_search;
CREATE INDEX tasks_search ON tasks USING gin (to_tsvector('agentdesk_simple',
    regexp_replace((summary || ' ' || details) COLLATE "und-x-icu", '[^[:alnum:]]+', ' ', 'g')));
DROP FUNCTION task_search_words(text, text, text);
DROP FUNCTION task_search_tag(text);
