-- Schema version 1: threads, receipts, records and thread leases.
-- Applied by `migrate.rs` inside one transaction, which then sets `PRAGMA user_version = 1`.

-- Marks the file as a tenx store ('tenx' in ASCII), so another application's SQLite file is
-- refused instead of being written into.
PRAGMA application_id = 1952804472;

-- One row per thread: the checkpoint as JSON (`record`, a `ThreadRecord`), and beside it the
-- columns the store reads without parsing it (the version check, listing, ownership).
CREATE TABLE threads (
    thread_id   TEXT    NOT NULL PRIMARY KEY,
    owner       TEXT,
    artifact_id TEXT    NOT NULL,
    graph       TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 0),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    record      TEXT    NOT NULL
) STRICT;

-- Listing is newest first: `updated_at` descending, `created_at` descending, id ascending.
CREATE INDEX threads_by_recency ON threads (updated_at DESC, created_at DESC, thread_id);
CREATE INDEX threads_by_owner ON threads (owner, updated_at DESC, created_at DESC, thread_id);

-- Tool receipts, one per (thread, idempotency key); a later receipt replaces the earlier one.
-- `in_flight` mirrors the receipt's state so recovery finds markers without parsing JSON.
CREATE TABLE receipts (
    thread_id TEXT    NOT NULL,
    key       TEXT    NOT NULL,
    tool      TEXT    NOT NULL,
    in_flight INTEGER NOT NULL CHECK (in_flight IN (0, 1)),
    receipt   TEXT    NOT NULL,
    PRIMARY KEY (thread_id, key)
) STRICT, WITHOUT ROWID;

-- The append-only record of approval decisions and tool calls, in commit order. Kept when a
-- thread is deleted; the triggers below refuse any change or removal.
CREATE TABLE records (
    seq       INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    kind      TEXT    NOT NULL,
    fields    TEXT    NOT NULL
) STRICT;

CREATE INDEX records_by_thread ON records (thread_id, seq);

CREATE TRIGGER records_are_never_changed BEFORE UPDATE ON records
BEGIN
    SELECT RAISE(ABORT, 'records are append-only');
END;

CREATE TRIGGER records_are_never_removed BEFORE DELETE ON records
BEGIN
    SELECT RAISE(ABORT, 'records are append-only');
END;

-- Thread leases shared by every process that opens the file: one holder per thread until
-- `expires_at` (milliseconds since the Unix epoch); the holder renews it while it holds it.
CREATE TABLE locks (
    thread_id  TEXT    NOT NULL PRIMARY KEY,
    holder     TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
