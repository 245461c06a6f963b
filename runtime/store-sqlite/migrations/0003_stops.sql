-- Schema version 3: stop requests between processes sharing the file. `POST /v1/graph/stop`
-- and `on_busy = "cancel"` on one process insert a row addressed to the lease holder of the
-- thread (`locks.holder`, unique to one lease); the process holding that lease reads new rows
-- while it holds leases and stops its run. Rows are pruned a minute after they were written.
-- `AUTOINCREMENT` so a sequence number is never reused after pruning (a reader resumes after
-- the last one it saw).

CREATE TABLE stops (
    seq          INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    thread_id    TEXT    NOT NULL,
    holder       TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    requested_at INTEGER NOT NULL
) STRICT;

CREATE INDEX stops_requested_at ON stops (requested_at);
