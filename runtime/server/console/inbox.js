/*
 * inbox.js: the inbox view (`#/inbox`). Lists the pending approvals the caller may answer,
 * oldest first, each with its impact (action, target, message, arguments), risk, age, expiry
 * countdown and who may answer, and a link to its detail. Owns batch approval: only low and
 * medium risk requests with a yes/no or approve/edit/reject answer can be selected, and the
 * selection is checked against the caps the list answer gives (count and total amount)
 * before anything is sent.
 */

import { api } from './api.js';
import { el, notices, showError, showResult, viewHeading } from './dom.js';
import {
  actionOf,
  ago,
  amountOf,
  argumentLine,
  countdown,
  isoTime,
  number,
  outcomeText,
  riskOf,
  setServerTime,
  whoMayAnswer,
} from './format.js';

const PAGE = 50;
/* The caps the spec names as the server's defaults, used when a list answer gives none. */
const DEFAULT_BATCH = { max_count: 10, max_total: 100000 };

/** Whether a request may be approved in a batch. */
export function batchable(summary) {
  return (
    (summary.risk === 'low' || summary.risk === 'medium') &&
    (summary.response === 'yes_no' || summary.response === 'approve_edit_reject')
  );
}

/**
 * What is wrong with approving `selected` (summaries) together under `caps`: a list of
 * sentences, empty when the batch may be sent.
 */
export function batchProblems(selected, caps) {
  const problems = [];
  if (selected.length > caps.max_count) {
    problems.push(`${selected.length} selected is over the batch cap of ${caps.max_count}`);
  }
  const total = selected.reduce((sum, summary) => sum + amountOf(summary.normalized_arguments), 0);
  if (total > caps.max_total) {
    problems.push(`total amount ${number(total)} is over the cap of ${number(caps.max_total)}`);
  }
  if (selected.some((summary) => !batchable(summary))) {
    problems.push('only low and medium risk requests can be approved in a batch');
  }
  return problems;
}

/**
 * Renders the inbox into `root`. `context.setMode(anyoneMayApprove)` shows or hides the
 * development banner; `context.signal` aborts loads when the view is left.
 */
export function renderInbox(root, context) {
  const state = { summaries: [], caps: { ...DEFAULT_BATCH }, offset: 0, busy: false };

  const list = el('ul', { id: 'inbox', class: 'inbox', 'aria-labelledby': 'inbox-heading' });
  const empty = el('p', { id: 'inbox-empty', class: 'empty', hidden: true }, 'No pending approvals for you.');
  const loading = el('p', { class: 'loading' }, 'Loading…');
  const more = el('button', { id: 'inbox-more', type: 'button', class: 'secondary', hidden: true }, 'Show more');
  const refresh = el('button', { id: 'refresh', type: 'button', class: 'secondary' }, 'Refresh');

  const status = el('div', { id: 'batch-status', class: 'batch-status', role: 'status' }, 'Nothing selected.');
  const capsLine = el('p', { class: 'hint batch-caps', id: 'batch-caps' });
  const note = el('input', { id: 'batch-note', type: 'text', maxlength: '2000', autocomplete: 'off' });
  const approve = el('button', { id: 'batch-approve', type: 'button', class: 'approve', disabled: true }, 'Approve selected');

  const batch = el(
    'section',
    { class: 'batch panel', 'aria-labelledby': 'batch-heading' },
    el('div', { class: 'batch-head' }, el('h2', { id: 'batch-heading' }, 'Batch approval'), capsLine),
    el(
      'div',
      { class: 'batch-row' },
      el('div', { class: 'batch-note' }, el('label', { for: 'batch-note' }, 'Note (optional)'), note),
      approve,
    ),
    status,
  );

  root.replaceChildren(
    el(
      'div',
      { class: 'view-head' },
      viewHeading('Inbox'),
      el('div', { class: 'view-tools' }, refresh),
    ),
    el('p', { class: 'lede' }, 'Pending approvals you may answer, oldest first. Open one to see its impact and answer it.'),
    ...notices(),
    el('h2', { id: 'inbox-heading', class: 'visually-hidden' }, 'Pending approvals'),
    batch,
    loading,
    list,
    empty,
    more,
  );

  function selected() {
    const ids = new Set(
      [...list.querySelectorAll('input.batch-select:checked')].map((box) => box.dataset.interruptId),
    );
    return state.summaries.filter((summary) => ids.has(summary.interrupt_id));
  }

  function updateBatch() {
    const chosen = selected();
    const problems = batchProblems(chosen, state.caps);
    if (chosen.length === 0) {
      status.textContent = state.summaries.some(batchable)
        ? 'Nothing selected.'
        : 'None of these requests can be approved in a batch.';
    } else if (problems.length) {
      status.textContent = `Cannot approve these together: ${problems.join('; ')}.`;
    } else {
      const total = chosen.reduce((sum, summary) => sum + amountOf(summary.normalized_arguments), 0);
      status.textContent = `${chosen.length} selected, total amount ${number(total)}.`;
    }
    status.classList.toggle('batch-refused', problems.length > 0);
    approve.disabled = state.busy || chosen.length === 0 || problems.length > 0;
    approve.textContent = chosen.length ? `Approve selected (${chosen.length})` : 'Approve selected';
  }

  function showCaps() {
    capsLine.textContent =
      `Low and medium risk only; at most ${state.caps.max_count} at once, total amount at most ` +
      `${number(state.caps.max_total)}. High risk is approved one at a time.`;
  }

  async function load(append) {
    const offset = append ? state.offset : 0;
    loading.hidden = false;
    try {
      const data = await api.list(offset, PAGE, { signal: context.signal });
      setServerTime(data.server_time_ms);
      context.setMode(Boolean(data.anyone_may_approve));
      if (data.batch && typeof data.batch === 'object') {
        state.caps = {
          max_count: Number.isFinite(data.batch.max_count) ? data.batch.max_count : DEFAULT_BATCH.max_count,
          max_total: Number.isFinite(data.batch.max_total) ? data.batch.max_total : DEFAULT_BATCH.max_total,
        };
      }
      const page = Array.isArray(data.approvals) ? data.approvals : [];
      const kept = append ? new Set(selected().map((summary) => summary.interrupt_id)) : new Set();
      state.summaries = append ? state.summaries.concat(page) : page;
      state.offset = offset + page.length;
      list.replaceChildren(...state.summaries.map((summary) => item(summary, kept.has(summary.interrupt_id))));
      empty.hidden = state.summaries.length > 0;
      more.hidden = page.length < PAGE;
      showCaps();
      updateBatch();
    } catch (error) {
      if (error.name === 'AbortError') return;
      showError(error);
    } finally {
      loading.hidden = true;
    }
  }

  async function sendBatch() {
    const chosen = selected();
    if (chosen.length === 0 || batchProblems(chosen, state.caps).length) return updateBatch();
    state.busy = true;
    updateBatch();
    showResult('Approving…');
    document.getElementById('error').replaceChildren();
    try {
      const data = await api.batch(
        chosen.map((summary) => summary.interrupt_id),
        note.value.trim(),
      );
      const results = Array.isArray(data && data.results) ? data.results : [];
      const done = results.filter((entry) => entry.ok);
      const failed = results.filter((entry) => !entry.ok);
      const byId = new Map(chosen.map((summary) => [summary.interrupt_id, summary]));
      const line = (entry) => {
        const summary = byId.get(entry.interrupt_id);
        const name = summary ? `${actionOf(summary)} ${summary.target || ''}`.trim() : entry.interrupt_id;
        if (entry.ok) return `${name}: ${outcomeText(entry.outcome)}`;
        const error = entry.error || {};
        return `${name}: not approved (${error.code || 'ERROR'}: ${error.message || 'refused'})`;
      };
      showResult(
        `Approved ${done.length} of ${chosen.length}.`,
        [el('ul', {}, results.map((entry) => el('li', {}, line(entry))))],
        true,
      );
      if (failed.length) {
        showError({ code: null, message: `${failed.length} could not be approved`, details: failed.map(line) });
      }
      note.value = '';
      await load(false);
    } catch (error) {
      document.getElementById('result').replaceChildren();
      showError(error);
    } finally {
      state.busy = false;
      updateBatch();
    }
  }

  list.addEventListener('change', (event) => {
    if (event.target.matches('input.batch-select')) updateBatch();
  });
  approve.addEventListener('click', sendBatch);
  refresh.addEventListener('click', () => load(false));
  more.addEventListener('click', () => load(true));

  showCaps();
  load(false);
}

/** One pending approval in the list. */
function item(summary, checked) {
  const id = summary.interrupt_id;
  const risk = riskOf(summary);
  const title = `${actionOf(summary)}${summary.target ? ` ${summary.target}` : ''}`;
  const boxId = `select-${id}`;
  const select = batchable(summary)
    ? el(
        'div',
        { class: 'item-select' },
        el('input', {
          type: 'checkbox',
          class: 'batch-select',
          id: boxId,
          'data-interrupt-id': id,
          checked,
        }),
        el('label', { for: boxId }, el('span', { class: 'visually-hidden' }, `Select ${title} for batch approval`), el('span', { 'aria-hidden': 'true' }, 'Select')),
      )
    : el('div', { class: 'item-select item-select-none' }, el('span', { class: 'hint' }, risk === 'high' || risk === 'unrated' ? 'One at a time' : 'Not in batches'));

  const flags = [];
  if (summary.replaces) flags.push(el('span', { class: 'flag flag-changed' }, 'Changed: replaces an earlier request'));
  if (summary.escalated_to && summary.escalated_to.role) {
    flags.push(el('span', { class: 'flag' }, `Escalated to ${summary.escalated_to.role}`));
  }

  return el(
    'li',
    { class: `item risk-${risk}`, 'data-interrupt-id': id },
    select,
    el(
      'div',
      { class: 'item-main' },
      el(
        'div',
        { class: 'item-head' },
        el('span', { class: `risk risk-badge risk-${risk}`, title: `${risk} risk` }, risk),
        el(
          'h3',
          { class: 'item-title' },
          el(
            'a',
            { class: 'open', href: `#/approval/${encodeURIComponent(id)}` },
            el('span', { class: 'action' }, actionOf(summary)),
            ' ',
            el('span', { class: summary.target ? 'target' : 'target target-none' }, summary.target || 'no target'),
          ),
        ),
        flags,
      ),
      summary.message ? el('p', { class: 'message' }, summary.message) : null,
      el('p', { class: 'args' }, argumentLine(summary.normalized_arguments)),
      el(
        'dl',
        { class: 'meta' },
        el('div', {}, el('dt', {}, 'Asked'), el('dd', {}, el('time', { class: 'age', 'data-asked-at': summary.asked_at_ms, datetime: isoTime(summary.asked_at_ms) }, ago(summary.asked_at_ms)), summary.requested_by ? ` by ${summary.requested_by}` : '')),
        el('div', {}, el('dt', {}, 'Expires'), el('dd', {}, el('span', expiryAttributes(summary.expires_at_ms), countdown(summary.expires_at_ms)))),
        el('div', {}, el('dt', {}, 'Who may answer'), el('dd', {}, el('span', { class: 'who' }, whoMayAnswer(summary.approvers, summary.escalated_to)))),
      ),
    ),
  );
}

function expiryAttributes(expiresMs) {
  return typeof expiresMs === 'number'
    ? { class: 'countdown', 'data-expires-at': expiresMs, title: isoTime(expiresMs) }
    : { class: 'countdown countdown-none' };
}
