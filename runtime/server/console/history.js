/*
 * history.js: the history view (`#/history`): the approval record as the caller may see it,
 * oldest first and paged (`next_after`), one row per record (answers, escalations, and the
 * approved calls that ran) with when, what, the arguments, the outcome, who answered and the
 * note; and the JSON Lines export,
 * downloaded with the token (fetch and a blob, since a plain link cannot send the header).
 */

import { api } from './api.js';
import { el, notices, showError, showResult, viewHeading } from './dom.js';
import { argumentLine, isoTime, plain, when } from './format.js';

const PAGE = 100;

/** Renders the history into `root`; `context.signal` aborts loads when the view is left. */
export function renderHistory(root, context) {
  let after = 0;
  const body = el('tbody');
  const table = el(
    'table',
    { id: 'history', class: 'data-table history' },
    el('caption', { class: 'visually-hidden' }, 'Approval record'),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ['When', 'Action', 'Arguments', 'Outcome', 'Answered by', 'Note'].map((name) => el('th', { scope: 'col' }, name)),
      ),
    ),
    body,
  );
  const empty = el('p', { id: 'history-empty', class: 'empty', hidden: true }, 'Nothing has been recorded yet.');
  const more = el('button', { id: 'history-more', type: 'button', class: 'secondary', hidden: true }, 'Show more');
  const exportLink = el('a', { id: 'export', class: 'button-link', href: '/v1/approval-records/export', download: 'approval-records.ndjson' }, 'Export the record (JSON Lines)');
  const loading = el('p', { class: 'loading' }, 'Loading…');

  root.replaceChildren(
    el('div', { class: 'view-head' }, viewHeading('History'), el('div', { class: 'view-tools' }, exportLink)),
    el('p', { class: 'lede' }, 'Every decision and escalation in the approval record that you may see, oldest first.'),
    ...notices(),
    loading,
    el('div', { class: 'table-wrap' }, table),
    empty,
    more,
  );

  async function load() {
    loading.hidden = false;
    more.disabled = true;
    try {
      const data = await api.records(after, PAGE, { signal: context.signal });
      const records = Array.isArray(data && data.records) ? data.records : [];
      body.append(...records.map(row));
      const next = data && data.next_after;
      if (typeof next === 'number') after = next;
      more.hidden = next === null || next === undefined;
      empty.hidden = body.children.length > 0;
    } catch (error) {
      if (error.name === 'AbortError') return;
      showError(error);
    } finally {
      loading.hidden = true;
      more.disabled = false;
    }
  }

  exportLink.addEventListener('click', async (event) => {
    event.preventDefault();
    document.getElementById('error').replaceChildren();
    try {
      const response = await api.exportRecords();
      const blob = await response.blob();
      const text = await blob.text();
      const lines = text.split('\n').filter((line) => line.trim() !== '').length;
      const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
      const anchor = el('a', { href: url, download: 'approval-records.ndjson', hidden: true });
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      showResult(`Exported ${lines} record${lines === 1 ? '' : 's'} as approval-records.ndjson.`);
    } catch (error) {
      showError(error);
    }
  });
  more.addEventListener('click', load);
  load();
}

/** What an answer decided, in the words the outcome uses. */
const DECISIONS = { approve: 'approved', edit: 'edited', reject: 'rejected', cancel: 'cancelled' };

/**
 * One record as a table row: an answer (`approval`), an `escalation`, or a `tool_call` (the
 * approved tool ran), or any other kind the record holds, shown by its kind.
 */
function row(record) {
  const at = typeof record.at_ms === 'number' ? record.at_ms : record.answered_at ?? record.asked_at;
  const cell = (label, className, ...content) => el('td', { class: className, 'data-label': label }, ...content);
  const whenCell = cell('When', 'when', el('time', { datetime: isoTime(at) }, when(at)));
  const kind = record.kind || 'approval';
  const attributes = { 'data-seq': record.seq, 'data-kind': kind, class: `record-${kind}` };
  if (kind === 'escalation') {
    return el(
      'tr',
      attributes,
      whenCell,
      cell('Action', 'action', record.action || '', interruptLine(record)),
      cell('Arguments', 'args', '—'),
      cell('Outcome', 'outcome', `escalated to role ${record.to_role}`),
      cell('Answered by', 'answered-by', record.by || 'anonymous'),
      cell('Note', 'note', record.note || ''),
    );
  }
  if (kind === 'tool_call') {
    return el(
      'tr',
      attributes,
      whenCell,
      cell('Action', 'action', record.tool || record.action || '', el('span', { class: 'sub' }, record.approved ? 'the approved call ran' : 'a call ran')),
      cell('Arguments', 'args', record.idempotency_key ? el('span', { class: 'sub mono' }, `key ${record.idempotency_key}`) : '—'),
      cell('Outcome', 'outcome', `ran: ${plain(record.outcome ?? 'unknown')}`),
      cell('Answered by', 'answered-by', '—'),
      cell('Note', 'note', ''),
    );
  }
  const edited = record.edited_arguments && typeof record.edited_arguments === 'object';
  const outcome = record.outcome ?? DECISIONS[record.decision] ?? record.decision ?? kind;
  return el(
    'tr',
    attributes,
    whenCell,
    cell(
      'Action',
      'action',
      record.action || record.tool_name || kind,
      record.target ? ` · ${record.target}` : '',
      record.requested_by ? el('span', { class: 'sub' }, `asked by ${record.requested_by}`) : null,
      interruptLine(record),
    ),
    cell(
      'Arguments',
      'args',
      argumentLine(record.original_arguments),
      edited ? el('span', { class: 'sub edited' }, `edited to: ${argumentLine(record.edited_arguments)}`) : null,
    ),
    cell('Outcome', 'outcome', plain(outcome)),
    cell('Answered by', 'answered-by', record.answered_by || (record.answered_at ? 'anonymous' : '—')),
    cell('Note', 'note', record.note || ''),
  );
}

function interruptLine(record) {
  return record.interrupt_id ? el('span', { class: 'sub mono' }, record.interrupt_id) : null;
}
