/*
 * detail.js: the detail view of one approval (`#/approval/<id>`), laid out so that impact comes
 * first: what will happen (action, target, risk, the program's message, every normalized
 * argument with its unit and meaning), then what changed since an earlier request, then the
 * evidence and, in a separate pane marked untrusted, the model's own words, then who may
 * answer. The answer controls are built by actions.js; this file places them, or `#refused`
 * when the caller may not answer.
 */

import { api } from './api.js';
import { renderActions } from './actions.js';
import { el, notices, showError, showResult, viewHeading } from './dom.js';
import { actionOf, ago, countdown, formatValue, isoTime, plain, riskOf, when, whoMayAnswer } from './format.js';
import { orderedNames } from './schema-form.js';

/**
 * Renders the approval `interruptId` into `root`. With `preset` (`{detail, result}`, after an
 * escalation answered a new detail) it renders that detail without loading it again.
 */
export async function renderDetail(root, context, interruptId, preset) {
  const back = el('p', { class: 'back' }, el('a', { href: '#/inbox' }, '← Back to the inbox'));
  if (!preset) {
    root.replaceChildren(back, viewHeading('Approval request'), ...notices(), el('p', { class: 'loading' }, 'Loading…'));
  }
  let detail = preset && preset.detail;
  if (!detail) {
    try {
      detail = await api.detail(interruptId, { signal: context.signal });
    } catch (error) {
      if (error.name === 'AbortError') return;
      root.querySelector('.loading')?.remove();
      showError(error);
      if (error.code === 'APPROVER_REFUSED') {
        root.append(refusedBlock({ rule: ruleOf(error.details), message: error.message }));
      }
      return;
    }
  }
  if (context.signal.aborted) return;

  const parameters = (detail.parameters_schema && detail.parameters_schema.properties) || {};
  const section = el(
    'section',
    { id: 'detail', class: 'detail', 'data-interrupt-id': detail.interrupt_id, 'aria-labelledby': 'detail-title' },
    impact(detail, parameters),
    detail.replaces_request ? difference(detail, parameters) : null,
    el('div', { class: 'panes' }, evidence(detail), modelWords(detail)),
    whoMayAnswerSection(detail),
  );
  const heading = viewHeading(`${actionOf(detail)}${detail.target ? ` · ${detail.target}` : ''}`);
  heading.id = 'detail-title';
  const [errorNode, resultNode] = notices();
  const answerArea = el('div', { class: 'answer-area' }, errorNode, resultNode);
  section.append(answerArea);

  root.replaceChildren(back, heading, section);

  if (detail.may_answer === false) {
    answerArea.append(refusedBlock(detail.refused));
  } else {
    answerArea.append(
      renderActions(detail, {
        escalated: (next, text) => renderDetail(root, context, interruptId, { detail: next, result: text }),
      }),
    );
  }
  if (preset && preset.result) showResult(preset.result, [], true);
}

/** `#impact`: what will happen if this is approved. */
function impact(detail, parameters) {
  const risk = riskOf(detail);
  const args = detail.normalized_arguments && typeof detail.normalized_arguments === 'object' ? detail.normalized_arguments : {};
  const names = orderedNames(detail.parameters_schema, args).filter((name) => name in args);
  const rows = names.map((name) => {
    const value = args[name];
    const description = parameters[name] && typeof parameters[name].description === 'string' ? parameters[name].description : '';
    return el(
      'tr',
      { 'data-param': name },
      el('th', { scope: 'row', class: 'param-name' }, el('code', {}, name)),
      el('td', { class: 'param-value', 'data-label': 'Value' }, formatValue(name, value, description)),
      el('td', { class: 'param-description', 'data-label': 'Meaning' }, description || '—'),
    );
  });
  return el(
    'section',
    { id: 'impact', class: `panel impact risk-${risk}`, 'aria-labelledby': 'impact-heading' },
    el('h2', { id: 'impact-heading' }, 'What will happen if you approve'),
    el(
      'p',
      { class: 'impact-line' },
      el('span', { class: `risk risk-badge risk-${risk}` }, risk),
      ' risk · ',
      el('span', { class: 'action' }, actionOf(detail)),
      detail.target ? ' on ' : ' ',
      el('span', { class: detail.target ? 'target' : 'target target-none' }, detail.target || '(no target)'),
    ),
    detail.message ? el('p', { class: 'message' }, detail.message) : null,
    el(
      'table',
      { id: 'arguments', class: 'data-table' },
      el('caption', {}, 'Arguments, as the tool will receive them'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Parameter'), el('th', { scope: 'col' }, 'Value'), el('th', { scope: 'col' }, 'Meaning'))),
      el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: '3' }, 'No arguments.'))),
    ),
    el(
      'dl',
      { class: 'facts' },
      fact('If rejected', detail.on_reject || 'the request ends without running the action'),
      fact(
        'Expires',
        typeof detail.expires_at_ms === 'number'
          ? [
              el('span', { class: 'countdown', 'data-expires-at': detail.expires_at_ms }, countdown(detail.expires_at_ms)),
              ` (${when(detail.expires_at_ms)})`,
            ]
          : el('span', { class: 'countdown countdown-none' }, 'no expiry'),
      ),
      fact('Asked', [
        el('time', { class: 'age', 'data-asked-at': detail.asked_at_ms, datetime: isoTime(detail.asked_at_ms) }, ago(detail.asked_at_ms)),
        detail.requested_by ? ` by ${detail.requested_by}` : '',
      ]),
    ),
  );
}

/** `#difference`: what changed since the request this one replaces. */
function difference(detail, parameters) {
  const changes = Array.isArray(detail.difference) ? detail.difference : [];
  const earlier = detail.replaces_request || {};
  return el(
    'section',
    { id: 'difference', class: 'panel difference', 'aria-labelledby': 'difference-heading' },
    el('h2', { id: 'difference-heading' }, 'Changed since the earlier request'),
    el(
      'p',
      {},
      'This request replaces an earlier one whose content changed',
      earlier.interrupt_id ? ` (${earlier.interrupt_id})` : '',
      '. An approval of the earlier request does not carry over: check each change.',
    ),
    el(
      'table',
      { class: 'data-table' },
      el('caption', { class: 'visually-hidden' }, 'Changes'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Field'), el('th', { scope: 'col' }, 'Before'), el('th', { scope: 'col' }, 'Now'))),
      el(
        'tbody',
        {},
        changes.length
          ? changes.map((change) =>
              el(
                'tr',
                { 'data-field': change.field },
                el('th', { scope: 'row' }, el('code', {}, change.field)),
                el('td', { class: 'before', 'data-label': 'Before' }, el('del', {}, changed(change.field, change.before, parameters))),
                el('td', { class: 'after', 'data-label': 'Now' }, el('ins', {}, changed(change.field, change.after, parameters))),
              ),
            )
          : el('tr', {}, el('td', { colspan: '3' }, 'The server listed no field-level change.')),
      ),
    ),
  );
}

/** A changed value as the approver reads it: an argument with its unit, anything else plainly. */
function changed(field, value, parameters) {
  const name = typeof field === 'string' && field.startsWith('normalized_arguments.') ? field.slice('normalized_arguments.'.length) : null;
  if (value === null || value === undefined) return '(none)';
  if (name === null) return plain(value);
  const description = parameters[name] && typeof parameters[name].description === 'string' ? parameters[name].description : '';
  return formatValue(name, value, description);
}

/** `#evidence`: the sources the program binds this approval to. */
function evidence(detail) {
  const items = Array.isArray(detail.evidence) ? detail.evidence : [];
  const line = (entry) => {
    if (entry && typeof entry === 'object') {
      if ('param' in entry) return ['Argument ', el('code', {}, entry.param), ` = ${plain(entry.value)}`];
      if ('literal' in entry) return [el('code', {}, plain(entry.literal)), ' (named by the program)'];
      if ('state' in entry) return ['State ', el('code', {}, entry.state), ` = ${plain(entry.value)}`];
    }
    return plain(entry);
  };
  return el(
    'section',
    { id: 'evidence', class: 'panel pane', 'aria-labelledby': 'evidence-heading' },
    el('h2', { id: 'evidence-heading' }, 'Evidence'),
    el('p', { class: 'hint' }, 'Declared by the program and bound to this request by its fingerprint.'),
    items.length ? el('ul', { class: 'evidence-list' }, items.map((entry) => el('li', {}, line(entry)))) : el('p', {}, 'No evidence is declared for this action.'),
    detail.details !== null && detail.details !== undefined
      ? [el('h3', {}, 'Details'), el('pre', { class: 'details' }, JSON.stringify(detail.details, null, 2))]
      : null,
  );
}

/** `#model-words`: the model's text beside the call, shown as untrusted plain text. */
function modelWords(detail) {
  const label = 'Model output — untrusted';
  const text = typeof detail.model_text === 'string' ? detail.model_text : '';
  return el(
    'section',
    { id: 'model-words', class: 'panel pane untrusted', 'aria-label': label },
    el('h2', {}, label),
    el(
      'p',
      { class: 'hint' },
      'What the model wrote beside this call. It is not evidence and may be wrong or manipulated; judge the action by its arguments and evidence.',
    ),
    text ? el('pre', { class: 'model-text' }, text) : el('p', { class: 'empty' }, 'The model wrote nothing beside this call.'),
  );
}

/** `#who-may-answer`: the approvers, separate duties, any escalation, and the request's identity. */
function whoMayAnswerSection(detail) {
  const escalation = detail.escalated_to;
  return el(
    'section',
    { id: 'who-may-answer', class: 'panel', 'aria-labelledby': 'who-heading' },
    el('h2', { id: 'who-heading' }, 'Who may answer'),
    el(
      'dl',
      { class: 'facts' },
      fact('Approvers', el('span', { class: 'who' }, whoMayAnswer(detail.approvers, escalation))),
      fact(
        'Separate duties',
        detail.separate_duties
          ? `yes: the person who asked${detail.requested_by ? ` (${detail.requested_by})` : ''} may not answer`
          : 'no',
      ),
      escalation
        ? fact('Escalated', [
            `to role ${escalation.role}`,
            escalation.by ? ` by ${escalation.by}` : '',
            typeof escalation.at_ms === 'number' ? `, ${when(escalation.at_ms)}` : '',
            escalation.note ? [': ', el('q', {}, escalation.note)] : '',
          ])
        : null,
      fact('Requested by', detail.requested_by || 'anonymous (no auth)'),
      fact('Where', `graph ${detail.graph}, node ${detail.node}, thread ${detail.thread_id}`),
      fact('Fingerprint', el('code', { class: 'fingerprint' }, detail.approval_fingerprint || '')),
    ),
  );
}

/** The `rule` of an error's details (an object, or a list holding one). */
function ruleOf(details) {
  const items = Array.isArray(details) ? details : [details];
  const found = items.find((item) => item && typeof item === 'object' && typeof item.rule === 'string');
  return found ? found.rule : null;
}

/** `#refused`: why this caller may not answer. */
function refusedBlock(refused) {
  const rule = refused && refused.rule;
  const explanations = {
    separate_duties: 'You asked for this action, and separate duties require someone else to answer it.',
    approvers: 'Only the approvers this request names may answer it, and your token holds none of their roles or scopes.',
    verified: 'Answering it needs a verified identity: sign in with a token.',
    owner: 'It waits in a thread you may not act on.',
  };
  const explanation = explanations[rule] || (refused && refused.message ? null : 'You may not answer this request.');
  return el(
    'section',
    { id: 'refused', class: 'panel refused', 'aria-labelledby': 'refused-heading' },
    el('h2', { id: 'refused-heading' }, 'You cannot answer this request'),
    explanation ? el('p', {}, explanation) : null,
    refused && refused.message ? el('p', {}, refused.message) : null,
    rule ? el('p', { class: 'hint' }, `Rule: ${rule}`) : null,
  );
}

function fact(term, description) {
  return el('div', {}, el('dt', {}, term), el('dd', {}, description));
}
