-- +goose Up
-- Steps are only ever read and written by task. Keyed by (task_id, position) in a
-- WITHOUT ROWID table they take one B-tree instead of a table and a unique index, so
-- creating a task writes fewer pages, and a task's steps are read in one range with no
-- lookup per step. A step's id is no longer stored: it is task_id * 1000 + position
-- (model.StepID; a task has at most 500 steps), so existing steps get new ids here.
CREATE TABLE steps_by_task (
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    title    TEXT NOT NULL,
    status   TEXT NOT NULL,
    PRIMARY KEY (task_id, position)
) WITHOUT ROWID;
INSERT INTO steps_by_task (task_id, position, title, status)
    SELECT task_id, position, title, status FROM steps;
DROP TABLE steps;
ALTER TABLE steps_by_task RENAME TO steps;

-- +goose Down
CREATE TABLE steps_with_ids (
    id       INTEGER PRIMARY KEY,
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    title    TEXT NOT NULL,
    status   TEXT NOT NULL,
    UNIQUE (task_id, position)
);
INSERT INTO steps_with_ids (id, task_id, position, title, status)
    SELECT task_id * 1000 + position, task_id, position, title, status FROM steps;
DROP TABLE steps;
ALTER TABLE steps_with_ids RENAME TO steps;
