-- Schema version 2: recovery at start-up finds the receipts still in flight without scanning
-- every receipt. (Threads with a run in progress are found by reading their checkpoints once,
-- at start-up, so commits pay nothing for it.)

CREATE INDEX receipts_in_flight ON receipts (thread_id) WHERE in_flight = 1;
