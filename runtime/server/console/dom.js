/*
 * dom.js: building the page's elements. `el` makes an element with attributes and children;
 * every string child becomes a text node, so text from the server (model output included) is
 * never parsed as HTML. Also here: the notice regions each view places (`#error`, `#result`)
 * and the helpers that fill them.
 */

/**
 * An element: `el('button', {id: 'approve', type: 'button', disabled: true}, 'Approve')`.
 * Attributes named `disabled`, `checked`, `hidden`, `required`, `value` and `selected` are set
 * as properties; `null`, `undefined` and `false` leave an attribute out. Children may be
 * nodes, strings, numbers, or arrays of them; `null` children are skipped.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (['disabled', 'checked', 'hidden', 'required', 'selected'].includes(name)) {
      node[name] = Boolean(value);
    } else if (name === 'value') {
      node.value = String(value);
    } else {
      node.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(node, children);
  return node;
}

/** Appends `children` (nodes, strings, numbers, arrays; `null` skipped) to `node`. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** The error (`#error`, role=alert) and result (`#result`, role=status) regions of a view. */
export function notices() {
  return [
    el('div', { id: 'error', class: 'notice notice-error', role: 'alert', tabindex: '-1' }),
    el('div', {
      id: 'result',
      class: 'notice notice-result',
      role: 'status',
      'aria-live': 'polite',
      tabindex: '-1',
    }),
  ];
}

/** Empties both notice regions. */
export function clearNotices() {
  for (const id of ['error', 'result']) {
    const node = document.getElementById(id);
    if (node) node.replaceChildren();
  }
}

/**
 * Shows an API error in `#error` as "CODE: message", with its details listed below. `error`
 * is an `ApiError` (see api.js) or any `Error`.
 */
export function showError(error) {
  const node = document.getElementById('error');
  if (!node) return;
  const code = error && error.code ? `${error.code}: ` : '';
  const message = (error && error.message) || 'something went wrong';
  const lines = detailLines(error && error.details);
  node.replaceChildren(
    el('p', { class: 'notice-title' }, code + message),
    lines.length ? el('ul', {}, lines.map((line) => el('li', {}, line))) : null,
  );
}

/** Shows `text` in `#result` (and any extra nodes below it); `focus` moves focus there. */
export function showResult(text, extra = [], focus = false) {
  const node = document.getElementById('result');
  if (!node) return;
  node.replaceChildren(el('p', { class: 'notice-title' }, text), ...extra);
  if (focus) node.focus();
}

/** The readable lines of an error's `details`: validation items, a refusal rule, or JSON. */
function detailLines(details) {
  if (details === null || details === undefined) return [];
  const items = Array.isArray(details) ? details : [details];
  const lines = [];
  for (const item of items.slice(0, 10)) {
    if (item && typeof item === 'object') {
      if (typeof item.msg === 'string') {
        const where = Array.isArray(item.loc) ? `${item.loc.join('.')}: ` : '';
        lines.push(where + item.msg);
      } else if (typeof item.rule === 'string' && Object.keys(item).length === 1) {
        lines.push(`rule: ${item.rule}`);
      } else if (Object.keys(item).length > 0) {
        lines.push(JSON.stringify(item));
      }
    } else if (item !== '' && item !== null) {
      lines.push(String(item));
    }
  }
  return lines;
}

/** A heading that views focus when they open (it is not a control, so nothing is preselected). */
export function viewHeading(text) {
  return el('h1', { class: 'view-title', tabindex: '-1' }, text);
}
