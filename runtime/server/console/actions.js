/*
 * actions.js: the answer controls of the detail view (`#actions`). Nothing is preselected or
 * focused: approve (for high risk only after retyping the target or amount), reject (a reason
 * is required), edit and approve (approve_edit_reject: a form generated from the parameters
 * schema, checked before it is sent), a custom answer (a form from the response schema), and
 * escalate (hand the request to another role with a note). Sends the answer, shows the outcome
 * in `#result` and API errors in `#error`; while a call is in flight every button is disabled.
 */

import { api } from './api.js';
import { el, showError, showResult } from './dom.js';
import { confirmationText, outcomeText, statusText } from './format.js';
import { schemaFields } from './schema-form.js';

const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;
const NOTE_MAX = 2000;

/**
 * The `#actions` section for `detail`. `hooks.escalated(newDetail, text)` is called after an
 * escalation (the detail view renders the new detail).
 */
export function renderActions(detail, hooks) {
  const section = el('section', { id: 'actions', class: 'panel actions', 'aria-labelledby': 'actions-heading' });
  const buttons = [];
  const refreshers = [];
  const flight = { busy: false };
  const refresh = () => refreshers.forEach((update) => update());

  async function send(label, call, onDone) {
    if (flight.busy) return;
    flight.busy = true;
    buttons.forEach((button) => {
      button.disabled = true;
    });
    document.getElementById('error').replaceChildren();
    showResult(`${label}…`);
    try {
      const data = await call();
      onDone(data);
    } catch (error) {
      document.getElementById('result').replaceChildren();
      showError(error);
      flight.busy = false;
      buttons.forEach((button) => {
        button.disabled = false;
      });
      refresh();
    }
  }

  function answered(data) {
    const outcome = outcomeText(data && data.outcome);
    const status = statusText(data && data.status);
    const extra = [];
    if (data && typeof data.final_text === 'string' && data.final_text) {
      extra.push(
        el(
          'div',
          { class: 'untrusted reply', role: 'group', 'aria-label': 'Model reply — untrusted' },
          el('p', { class: 'hint' }, 'The run continued. Its last reply (model output — untrusted):'),
          el('pre', { class: 'model-text' }, data.final_text),
        ),
      );
    }
    const next = data && data.next_interrupt_id;
    section.replaceChildren(
      el('h2', { id: 'actions-heading' }, 'Answered'),
      el('p', {}, `You answered this request: ${outcome.toLowerCase()}.`),
      el(
        'p',
        { class: 'answered-links' },
        next ? el('a', { id: 'next-request', href: `#/approval/${encodeURIComponent(next)}` }, 'Open the next request of this run') : null,
        next ? ' · ' : null,
        el('a', { href: '#/inbox' }, 'Back to the inbox'),
      ),
    );
    showResult(status ? `${outcome}. The run is now ${status}.` : `${outcome}.`, extra, true);
  }

  const note = el('textarea', { id: 'answer-note', rows: '2', maxlength: String(NOTE_MAX) });
  const noteValue = () => note.value.trim();

  section.append(
    el('h2', { id: 'actions-heading' }, 'Your answer'),
    el(
      'p',
      { class: 'hint' },
      detail.response === 'custom'
        ? 'Nothing is chosen for you. Read the request above, then answer it or escalate it.'
        : 'Nothing is chosen for you. Read what will happen above, then approve, reject, edit or escalate.',
    ),
  );

  const groups = el('div', { class: 'action-groups' });
  section.append(groups);

  if (detail.response === 'custom') {
    groups.append(customGroup(detail, buttons, send, answered, note, noteValue));
  } else {
    groups.append(approveGroup(detail, buttons, refreshers, flight, send, answered, note, noteValue));
    groups.append(rejectGroup(detail, buttons, refreshers, flight, send, answered));
    if (detail.response === 'approve_edit_reject') {
      groups.append(editGroup(detail, buttons, send, answered, noteValue));
    }
  }
  groups.append(escalateGroup(detail, buttons, send, hooks));
  refresh();
  return section;
}

/** Approve, behind a retyped confirmation for high risk, with the optional note. */
function approveGroup(detail, buttons, refreshers, flight, send, answered, note, noteValue) {
  const high = detail.risk !== 'low' && detail.risk !== 'medium';
  const approve = el('button', { id: 'approve', type: 'button', class: 'approve' }, 'Approve');
  buttons.push(approve);
  const group = el('div', { class: 'action-group', role: 'group', 'aria-labelledby': 'approve-heading' }, el('h3', { id: 'approve-heading' }, 'Approve'));
  let confirm = null;
  let expected = '';
  if (high) {
    const { what, text } = confirmationText(detail);
    expected = text;
    confirm = el('input', { id: 'confirm-input', type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'confirm-hint' });
    group.append(
      el(
        'div',
        { class: 'field confirm' },
        el('label', { for: 'confirm-input' }, `High risk. To approve, type ${what} exactly: `, el('strong', { class: 'confirm-text' }, text)),
        confirm,
        el('p', { class: 'hint', id: 'confirm-hint' }, 'Approve stays disabled until the text matches.'),
      ),
    );
    confirm.addEventListener('input', () => refreshers.forEach((update) => update()));
  }
  const ready = () => !confirm || confirm.value.trim() === expected;
  refreshers.push(() => {
    approve.disabled = flight.busy || !ready();
  });
  group.append(el('div', { class: 'field' }, el('label', { for: 'answer-note' }, 'Note for the record (optional)'), note), approve);
  approve.addEventListener('click', () => {
    if (!ready()) return;
    const resume = detail.response === 'approve_edit_reject' ? { decision: 'approve' } : { approved: true };
    send('Approving', () => api.answer(detail.interrupt_id, resume, noteValue()), answered);
  });
  return group;
}

/** Reject, with the reason it needs (kept as the record's note). */
function rejectGroup(detail, buttons, refreshers, flight, send, answered) {
  const reason = el('textarea', { id: 'reject-reason', rows: '2', maxlength: String(NOTE_MAX), required: true, 'aria-describedby': 'reject-hint' });
  const reject = el('button', { id: 'reject', type: 'button', class: 'reject' }, 'Reject');
  buttons.push(reject);
  const ready = () => reason.value.trim() !== '';
  const update = () => {
    reject.disabled = flight.busy || !ready();
  };
  refreshers.push(update);
  reason.addEventListener('input', update);
  reject.addEventListener('click', () => {
    if (!ready()) return;
    const resume = detail.response === 'approve_edit_reject' ? { decision: 'reject' } : { approved: false };
    send('Rejecting', () => api.answer(detail.interrupt_id, resume, reason.value.trim()), answered);
  });
  return el(
    'div',
    { class: 'action-group', role: 'group', 'aria-labelledby': 'reject-heading' },
    el('h3', { id: 'reject-heading' }, 'Reject'),
    el(
      'div',
      { class: 'field' },
      el('label', { for: 'reject-reason' }, 'Reason (required)'),
      reason,
      el('p', { class: 'hint', id: 'reject-hint' }, `Kept in the approval record. Then: ${detail.on_reject || 'the action does not run'}`),
    ),
    reject,
  );
}

/** Edit and approve: the arguments as a form, checked before it is sent. */
function editGroup(detail, buttons, send, answered, noteValue) {
  const { fields, read } = schemaFields(detail.parameters_schema, detail.normalized_arguments, 'edit');
  const errors = el('div', { id: 'edit-errors', class: 'form-errors', role: 'alert' });
  const submit = el('button', { id: 'edit-submit', type: 'submit', class: 'approve' }, 'Approve with these changes');
  buttons.push(submit);
  const form = el('form', { id: 'edit-form', novalidate: true, 'aria-labelledby': 'edit-heading' }, fields, errors, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const { value, problems } = read();
    if (problems.length) {
      errors.replaceChildren(
        el('p', {}, `Not sent: ${problems.length === 1 ? 'one field needs' : `${problems.length} fields need`} fixing.`),
        el('ul', {}, problems.map((problem) => el('li', {}, `${problem.name}: ${problem.message}`))),
      );
      problems[0].input.focus();
      return;
    }
    errors.replaceChildren();
    send(
      'Sending the edit',
      () => api.answer(detail.interrupt_id, { decision: 'edit', edited_arguments: value }, noteValue()),
      answered,
    );
  });
  return el(
    'div',
    { class: 'action-group action-group-wide', role: 'group', 'aria-labelledby': 'edit-heading' },
    el('h3', { id: 'edit-heading' }, 'Edit and approve'),
    el('p', { class: 'hint' }, 'Change the arguments, then approve the changed action. The form replaces every argument.'),
    form,
  );
}

/** A custom answer: a form generated from the response schema. */
function customGroup(detail, buttons, send, answered, note, noteValue) {
  const schema = detail.response_schema && typeof detail.response_schema === 'object' ? detail.response_schema : {};
  const objectSchema = schema.type === 'object' || schema.properties ? schema : { type: 'object', properties: { answer: schema }, required: ['answer'] };
  const { fields, read } = schemaFields(objectSchema, {}, 'answer');
  const errors = el('div', { id: 'answer-errors', class: 'form-errors', role: 'alert' });
  const submit = el('button', { id: 'answer-submit', type: 'submit' }, 'Send answer');
  buttons.push(submit);
  const form = el(
    'form',
    { id: 'answer-form', novalidate: true, 'aria-labelledby': 'answer-heading' },
    fields,
    el('div', { class: 'field' }, el('label', { for: 'answer-note' }, 'Note for the record (optional)'), note),
    errors,
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const { value, problems } = read();
    if (problems.length) {
      errors.replaceChildren(el('ul', {}, problems.map((problem) => el('li', {}, `${problem.name}: ${problem.message}`))));
      problems[0].input.focus();
      return;
    }
    errors.replaceChildren();
    const resume = objectSchema === schema ? value : value.answer;
    send('Sending the answer', () => api.answer(detail.interrupt_id, resume, noteValue()), answered);
  });
  return el(
    'div',
    { class: 'action-group action-group-wide', role: 'group', 'aria-labelledby': 'answer-heading' },
    el('h3', { id: 'answer-heading' }, 'Answer'),
    el('p', { class: 'hint' }, 'This request asks for an answer of its own shape.'),
    form,
  );
}

/** Escalate: hand the request to another role, with a note saying why. */
function escalateGroup(detail, buttons, send, hooks) {
  const role = el('input', { id: 'escalate-role', type: 'text', autocomplete: 'off', spellcheck: 'false', maxlength: '64', 'aria-describedby': 'escalate-hint' });
  const note = el('textarea', { id: 'escalate-note', rows: '2', maxlength: String(NOTE_MAX) });
  const errors = el('div', { id: 'escalate-errors', class: 'form-errors', role: 'alert' });
  const escalate = el('button', { id: 'escalate', type: 'button', class: 'secondary' }, 'Escalate');
  buttons.push(escalate);
  escalate.addEventListener('click', () => {
    const problems = [];
    const roleText = role.value.trim();
    const noteText = note.value.trim();
    if (!ROLE.test(roleText)) problems.push('Role: 1 to 64 letters, digits or _ . : -');
    if (noteText === '') problems.push('Why: a note is required');
    if (noteText.length > NOTE_MAX) problems.push(`Why: at most ${NOTE_MAX} characters`);
    invalid(role, !ROLE.test(roleText));
    invalid(note, noteText === '' || noteText.length > NOTE_MAX);
    if (problems.length) {
      errors.replaceChildren(el('ul', {}, problems.map((problem) => el('li', {}, problem))));
      return;
    }
    errors.replaceChildren();
    send('Escalating', () => api.escalate(detail.interrupt_id, roleText, noteText), (next) =>
      hooks.escalated(next, `Escalated to role ${roleText}. Only holders of that role may answer now.`),
    );
  });
  return el(
    'div',
    { class: 'action-group', role: 'group', 'aria-labelledby': 'escalate-heading' },
    el('h3', { id: 'escalate-heading' }, 'Escalate'),
    el(
      'div',
      { class: 'field' },
      el('label', { for: 'escalate-role' }, 'Hand it to role'),
      role,
      el('p', { class: 'hint', id: 'escalate-hint' }, 'For example finance_lead. Afterwards only that role may answer.'),
    ),
    el('div', { class: 'field' }, el('label', { for: 'escalate-note' }, 'Why (required)'), note),
    errors,
    escalate,
  );
}

function invalid(input, isInvalid) {
  if (isInvalid) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}
