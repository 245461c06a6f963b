-- Schema version 1: threads, receipts, records and thread leases.
-- Applied by `migrate.rs` inside one transaction (under an advisory lock, so replicas starting
-- at once apply it once), which then records version 1 in `tenx_schema_migrations`.
-- Ids and keys are `COLLATE "C"`: ordered by code point, as the in-memory and SQLite stores
-- order them, whatever the database's default collation.

-- One row per thread: the checkpoint as JSON text (`record`, a `ThreadRecord`; text, not jsonb,
-- so every number reads back as the exact `f64` written), and beside it the columns the store
-- reads without parsing it. `unfinished` is set at commit: a run in progress that waits for
-- nothing, which recovery at start-up lists through the partial index below.
CREATE TABLE threads (
    thread_id   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    owner       TEXT COLLATE "C",
    artifact_id TEXT    NOT NULL,
    graph       TEXT    NOT NULL,
    version     BIGINT  NOT NULL CHECK (version >= 0),
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL,
    unfinished  BOOLEAN NOT NULL,
    record      TEXT    NOT NULL
);

-- Listing is newest first: `updated_at` descending, `created_at` descending, id ascending.
CREATE INDEX threads_by_recency ON threads (updated_at DESC, created_at DESC, thread_id);
CREATE INDEX threads_by_owner ON threads (owner, updated_at DESC, created_at DESC, thread_id);
CREATE INDEX threads_unfinished ON threads (thread_id) WHERE unfinished;

-- Tool receipts, one per (thread, idempotency key); a later receipt replaces the earlier one.
-- `in_flight` mirrors the receipt's state so recovery finds markers without parsing JSON.
CREATE TABLE receipts (
    thread_id TEXT COLLATE "C" NOT NULL,
    key       TEXT COLLATE "C" NOT NULL,
    tool      TEXT    NOT NULL,
    in_flight BOOLEAN NOT NULL,
    receipt   TEXT    NOT NULL,
    PRIMARY KEY (thread_id, key)
);

CREATE INDEX receipts_in_flight ON receipts (thread_id) WHERE in_flight;

-- The append-only record of approval decisions and tool calls, in commit order (a commit takes
-- its threads' advisory locks before appending, so `seq` follows commit order per thread).
-- Kept when a thread is deleted; the triggers below refuse any change or removal.
CREATE TABLE records (
    seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id TEXT COLLATE "C" NOT NULL,
    at        BIGINT NOT NULL,
    kind      TEXT   NOT NULL,
    fields    TEXT   NOT NULL
);

CREATE INDEX records_by_thread ON records (thread_id, seq);

CREATE FUNCTION records_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'records are append-only';
END
$$;

CREATE TRIGGER records_are_never_changed BEFORE UPDATE OR DELETE ON records
    FOR EACH ROW EXECUTE FUNCTION records_are_append_only();

CREATE TRIGGER records_are_never_truncated BEFORE TRUNCATE ON records
    FOR EACH STATEMENT EXECUTE FUNCTION records_are_append_only();

-- Thread leases shared by every replica on the database: one holder per thread until
-- `expires_at`, measured on the database's clock (so replicas on different machines agree);
-- the holder renews it while it holds it.
CREATE TABLE locks (
    thread_id  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    holder     TEXT        NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
