-- +goose Up
-- The twin of PostgreSQL's 00026, which counts the changes to tokens there as 00024
-- does here. Nothing changes on SQLite.
SELECT 1;

-- +goose Down
SELECT 1;
