-- Schema version 4: the approvals inbox. `open_interrupt` and `asked_at` mirror the checkpoint's
-- open question (a tool approval or an interrupt node; never a remote tool call) so the inbox
-- lists open questions, and an answer finds its thread by interrupt id, without parsing every
-- checkpoint. Set at every commit; filled here for threads already waiting.

ALTER TABLE threads ADD COLUMN open_interrupt TEXT;
ALTER TABLE threads ADD COLUMN asked_at INTEGER;

UPDATE threads
   SET open_interrupt = json_extract(record, '$.pending.interrupt.id'),
       asked_at = json_extract(record, '$.pending.asked_at')
 WHERE json_extract(record, '$.pending.interrupt.id') IS NOT NULL;

CREATE INDEX threads_open_questions ON threads (asked_at, thread_id) WHERE open_interrupt IS NOT NULL;
CREATE INDEX threads_by_open_interrupt ON threads (open_interrupt) WHERE open_interrupt IS NOT NULL;
