-- Schema version 2: a lease counts the replicas waiting for it, so its release announces itself
-- (`NOTIFY`) only when someone waits. Every `pg_notify` queues behind one lock, held until its
-- transaction commits, so announcing every release serialized all replicas' releases; most
-- leases are never waited for.
--
-- `waiters` is raised by each failed take of a held lease (in the statement that tries it), and
-- starts at 0 for a new holder. A waiter that gives up leaves the count high: one needless
-- notify at the release, never a missed one. Polling stays the fallback either way.
ALTER TABLE locks ADD COLUMN waiters INTEGER NOT NULL DEFAULT 0;
