-- +goose Up
-- Email to the people a question asks (issue 40). mail_cursors: how far each project's
-- event log has been read for new questions. mail_outbox: one email per person per
-- question (task and waiting_version), sent by the jobs with retries; status is queued
-- (to send, at next_attempt_at), sent, failed (given up) or dropped (the question ended
-- before it went out). mail_links: the links of a sent email, by the SHA-256 of their
-- random token (the token itself is only in the email); choice is the option's index,
-- -1 for the link that opens the question; used_at is set by the click that answered.
CREATE TABLE mail_cursors (
    project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    cursor     INTEGER NOT NULL
);
CREATE TABLE mail_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id         INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    waiting_version INTEGER NOT NULL,
    recipient       TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    next_attempt_at TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    sent_at         TEXT,
    UNIQUE (task_id, waiting_version, recipient)
);
CREATE INDEX mail_outbox_project ON mail_outbox(project_id, id);
CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);
CREATE TABLE mail_links (
    token_hash TEXT PRIMARY KEY,
    outbox_id  INTEGER NOT NULL REFERENCES mail_outbox(id) ON DELETE CASCADE,
    choice     INTEGER NOT NULL,
    used_at    TEXT
);
CREATE INDEX mail_links_outbox ON mail_links(outbox_id);

-- +goose Down
DROP TABLE mail_links;
DROP TABLE mail_outbox;
DROP TABLE mail_cursors;
