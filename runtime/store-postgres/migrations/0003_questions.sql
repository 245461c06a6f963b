-- Schema version 3: the approvals inbox. `open_interrupt` and `asked_at` mirror the checkpoint's
-- open question (a tool approval or an interrupt node; never a remote tool call) so the inbox
-- lists open questions, and an answer finds its thread by interrupt id, without parsing every
-- checkpoint. Set at every commit; filled here for threads already waiting.

ALTER TABLE threads ADD COLUMN open_interrupt TEXT COLLATE "C";
ALTER TABLE threads ADD COLUMN asked_at BIGINT;

UPDATE threads
   SET open_interrupt = record::jsonb #>> '{pending,interrupt,id}',
       asked_at = (record::jsonb #>> '{pending,asked_at}')::bigint
 WHERE record::jsonb #>> '{pending,interrupt,id}' IS NOT NULL;

CREATE INDEX threads_open_questions ON threads (asked_at, thread_id) WHERE open_interrupt IS NOT NULL;
CREATE INDEX threads_by_open_interrupt ON threads (open_interrupt) WHERE open_interrupt IS NOT NULL;
