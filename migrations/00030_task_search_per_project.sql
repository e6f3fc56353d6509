-- +goose Up
-- A task search costs what the caller's project holds, not the whole database (issue 37
-- item 9). FTS5 reads a prefix query ("a"*) by merging the lists of every term with
-- that prefix in the whole index, whatever else the query asks: 16 one-letter prefixes
-- in a small project took 0.5-1.1 s beside 20,000 tasks of another project. So every
-- word is indexed behind its project's tag (store.searchTag, 12 letters of the MD5 of
-- the project's id): a search reads only the terms of its own project.
--
-- One column, words: the task's summary and details as store.IndexTaskSearch writes
-- them, each word with its project's tag in front. Same tokenizer, contentless, no
-- positions. Every task is noted again to be indexed in the new form.
DROP TABLE tasks_fts;
CREATE VIRTUAL TABLE tasks_fts USING fts5(words, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', detail=none);
INSERT OR IGNORE INTO tasks_fts_pending (task_id) SELECT id FROM tasks;

-- +goose Down
DROP TABLE tasks_fts;
CREATE VIRTUAL TABLE tasks_fts USING fts5(summary, details, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', detail=none);
INSERT OR IGNORE INTO tasks_fts_pending (task_id) SELECT id FROM tasks;
