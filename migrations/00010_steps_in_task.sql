-- +goose Up
-- A task's steps are only ever read and written with the task, so they move into its
-- row, as a JSON array of {"title", "status"} in position order (a step's id stays
-- derived: model.StepID). Creating a task then inserts one row instead of one per step,
-- into one B-tree instead of two, with no foreign-key check per step; a task, or a page
-- of tasks, is read in one query. Step ids do not change.
ALTER TABLE tasks ADD COLUMN steps TEXT NOT NULL DEFAULT '[]';
UPDATE tasks SET steps = (
    SELECT json_group_array(json_object('title', s.title, 'status', s.status) ORDER BY s.position)
    FROM steps s WHERE s.task_id = tasks.id)
WHERE id IN (SELECT task_id FROM steps);
DROP TABLE steps;

-- +goose Down
CREATE TABLE steps (
    task_id  INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    title    TEXT NOT NULL,
    status   TEXT NOT NULL,
    PRIMARY KEY (task_id, position)
) WITHOUT ROWID;
INSERT INTO steps (task_id, position, title, status)
    SELECT t.id, s.key, s.value ->> '$.title', s.value ->> '$.status' FROM tasks t, json_each(t.steps) s;
ALTER TABLE tasks DROP COLUMN steps;
