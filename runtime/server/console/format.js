/*
 * format.js: how the console words things. Times (ages, expiry countdowns, dates, all against
 * the server's clock), values with their units ("5900 cents (59.00)"), who may answer, the
 * amount of a request as the batch rule counts it, and the text to retype for a high-risk
 * approval. Pure functions, except the clock offset and `tick`, which refreshes every age and
 * countdown on the page (the console calls it once a second).
 */

let offsetMs = 0;

/** Records the server's time (`server_time_ms` of a list answer) to correct the local clock. */
export function setServerTime(serverMs) {
  if (typeof serverMs === 'number' && Number.isFinite(serverMs)) offsetMs = serverMs - Date.now();
}

/** Now, on the server's clock, in milliseconds since the epoch. */
export function now() {
  return Date.now() + offsetMs;
}

/** "less than a minute ago", "3 min ago", "5 h ago", "2 days ago". */
export function ago(atMs, nowMs = now()) {
  if (typeof atMs !== 'number') return 'unknown';
  const seconds = Math.max(0, Math.floor((nowMs - atMs) / 1000));
  if (seconds < 60) return 'less than a minute ago';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

/** Time left until `expiresMs`: "42 s left", "4 min 05 s left", "23 h 59 min left", "expired". */
export function countdown(expiresMs, nowMs = now()) {
  if (expiresMs === null || expiresMs === undefined) return 'no expiry';
  const left = Math.floor((expiresMs - nowMs) / 1000);
  if (left <= 0) return 'expired';
  if (left < 60) return `${left} s left`;
  const minutes = Math.floor(left / 60);
  if (minutes < 60) return `${minutes} min ${String(left % 60).padStart(2, '0')} s left`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${String(minutes % 60).padStart(2, '0')} min left`;
  return `${Math.floor(hours / 24)} days ${hours % 24} h left`;
}

/** Whether `expiresMs` has passed. */
export function isExpired(expiresMs, nowMs = now()) {
  return typeof expiresMs === 'number' && expiresMs <= nowMs;
}

/** A moment in local time, "2026-12-03 16:40:12"; strings (ISO times) are shown as given. */
export function when(at) {
  if (typeof at === 'string') return at;
  if (typeof at !== 'number' || !Number.isFinite(at)) return '';
  const date = new Date(at);
  const pad = (number) => String(number).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/** The same moment in UTC (ISO 8601), for a `title` or `datetime` attribute. */
export function isoTime(at) {
  if (typeof at !== 'number' || !Number.isFinite(at)) return null;
  return new Date(at).toISOString();
}

/**
 * Refreshes every `[data-asked-at]` (age) and `[data-expires-at]` (countdown) under `root`.
 * A countdown that reaches zero marks its element `data-expired`.
 */
export function tick(root = document) {
  const nowMs = now();
  for (const node of root.querySelectorAll('[data-asked-at]')) {
    const text = ago(Number(node.dataset.askedAt), nowMs);
    if (node.textContent !== text) node.textContent = text;
  }
  for (const node of root.querySelectorAll('[data-expires-at]')) {
    const expires = Number(node.dataset.expiresAt);
    const text = countdown(expires, nowMs);
    if (node.textContent !== text) node.textContent = text;
    node.toggleAttribute('data-expired', isExpired(expires, nowMs));
  }
}

/** Who may answer: "role support_lead or scope refunds:approve", with an escalation first. */
export function whoMayAnswer(approvers, escalatedTo) {
  if (escalatedTo && escalatedTo.role) return `role ${escalatedTo.role} (escalated)`;
  if (!approvers) return 'anyone who may act on the thread';
  const parts = [
    ...(approvers.roles || []).map((role) => `role ${role}`),
    ...(approvers.scopes || []).map((scope) => `scope ${scope}`),
  ];
  return parts.length ? parts.join(' or ') : 'nobody (no approver is declared)';
}

/** The risk a request states, or 'unrated' when it states none (treated as high everywhere). */
export function riskOf(request) {
  return ['low', 'medium', 'high'].includes(request.risk) ? request.risk : 'unrated';
}

/** The name of what a request does: its action, its tool, or the node that asks. */
export function actionOf(request) {
  return request.action || request.tool_name || `question in ${request.node || 'the graph'}`;
}

/** A number without floating-point noise (0.1 + 0.2 reads 0.3). */
export function number(value) {
  return String(Math.round(value * 1e6) / 1e6);
}

/** Whether a parameter name counts as an amount for the batch cap. */
export function isAmountName(name) {
  return name === 'amount' || name.startsWith('amount_') || name.endsWith('_amount');
}

/** The amount of one request: the sum of its numeric amount arguments (0 when it has none). */
export function amountOf(args) {
  let total = 0;
  for (const [name, value] of Object.entries(args || {})) {
    if (isAmountName(name) && typeof value === 'number' && Number.isFinite(value)) total += value;
  }
  return total;
}

/** Whether any argument of `args` is a numeric amount. */
export function hasAmount(args) {
  return Object.entries(args || {}).some(
    ([name, value]) => isAmountName(name) && typeof value === 'number' && Number.isFinite(value),
  );
}

/**
 * What a high-risk approval asks the approver to retype: the target when there is one, else
 * the amount, else the action's name.
 */
export function confirmationText(detail) {
  if (typeof detail.target === 'string' && detail.target.trim() !== '') {
    return { what: 'the target', text: detail.target.trim() };
  }
  if (hasAmount(detail.normalized_arguments)) {
    return { what: 'the amount', text: number(amountOf(detail.normalized_arguments)) };
  }
  return { what: 'the action', text: actionOf(detail) };
}

/* Units a name or description may state: the word, how it is written, and its minor-unit divisor. */
const UNITS = [
  { words: ['cents', 'cent'], label: 'cents', minor: 100 },
  { words: ['pence', 'penny', 'pennies'], label: 'pence', minor: 100 },
  { words: ['dollars', 'dollar', 'usd'], label: 'dollars' },
  { words: ['euros', 'euro', 'eur'], label: 'euros' },
  { words: ['pounds', 'gbp'], label: 'pounds' },
  { words: ['yen', 'jpy'], label: 'yen' },
  { words: ['percent', 'percentage', 'pct'], label: '%' },
  { words: ['milliseconds', 'ms'], label: 'ms' },
  { words: ['seconds', 'secs'], label: 'seconds' },
  { words: ['minutes', 'mins'], label: 'minutes' },
  { words: ['hours'], label: 'hours' },
  { words: ['days'], label: 'days' },
];

/** The unit a parameter's name (first) or description states, or `null`. */
export function unitOf(name, description) {
  const nameWords = String(name || '').toLowerCase().split(/[^a-z]+/);
  const descriptionWords = String(description || '').toLowerCase().split(/[^a-z]+/);
  for (const words of [nameWords, descriptionWords]) {
    const unit = UNITS.find((candidate) => candidate.words.some((word) => words.includes(word)));
    if (unit) return unit;
  }
  return null;
}

/**
 * A value as the approver reads it: numbers with their unit ("5900 cents (59.00)"), strings as
 * they are, `null` as "null", anything else as compact JSON.
 */
export function formatValue(name, value, description) {
  if (typeof value === 'number') {
    const unit = unitOf(name, description);
    if (!unit) return String(value);
    if (unit.minor) return `${value} ${unit.label} (${(value / unit.minor).toFixed(2)})`;
    return unit.label === '%' ? `${value} %` : `${value} ${unit.label}`;
  }
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** Any JSON value as short text (differences, evidence, history): strings bare, others JSON. */
export function plain(value) {
  if (typeof value === 'string') return value;
  if (value === undefined) return '(none)';
  return JSON.stringify(value);
}

/** Arguments as one line: "order_id 1042, amount_cents 5900". */
export function argumentLine(args) {
  if (!args || typeof args !== 'object') return '';
  return Object.entries(args)
    .map(([name, value]) => `${name} ${plain(value)}`)
    .join(', ');
}

/** The outcome of an answer as the result region says it. */
export function outcomeText(outcome) {
  switch (outcome) {
    case 'approved':
      return 'Approved';
    case 'edited':
      return 'Edited and approved';
    case 'rejected':
      return 'Rejected';
    case 'cancelled':
      return 'Cancelled';
    default:
      return outcome ? `Answered (${outcome})` : 'Answered';
  }
}

/** An execution status (a word, or an object naming one) as text. */
export function statusText(status) {
  if (typeof status === 'string') return status;
  if (status && typeof status === 'object') {
    for (const key of ['status', 'state', 'kind']) {
      if (typeof status[key] === 'string') return status[key];
    }
    return JSON.stringify(status);
  }
  return '';
}
