-- +goose Up
-- Webhooks (Standard Webhooks, issue 22): each sends its project's events, in seq
-- order, to a URL fixed at creation. The delivery state is kept in the row, so that a
-- restart (or kill -9) resumes where it was: cursor is the last seq done with
-- (delivered, or not for this webhook); attempts and failing_since describe the
-- failures of the event after it, next_attempt_at when to try it again.
CREATE TABLE webhooks (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL DEFAULT '[]',  -- JSON array of types; empty = all
    secret          TEXT NOT NULL,               -- whsec_..., as shown: it signs
    description     TEXT NOT NULL DEFAULT '',
    enabled         INTEGER NOT NULL DEFAULT 1,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    cursor          INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    failing_since   TEXT,
    next_attempt_at TEXT,
    disabled_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhooks_project ON webhooks(project_id);

-- Every attempt, kept like the event log (pruned by age).
CREATE TABLE webhook_deliveries (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id  INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    event_type  TEXT NOT NULL,
    attempt     INTEGER NOT NULL,          -- 1, 2, ... for the event; 0 for a redelivery
    status      INTEGER,                   -- the HTTP status; NULL without an answer
    duration_ms INTEGER NOT NULL,
    response    TEXT NOT NULL DEFAULT '',  -- the answer's first 1 KiB
    error       TEXT NOT NULL DEFAULT '',
    at          TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, id);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
