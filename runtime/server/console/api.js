/*
 * api.js: every call the console makes to the approvals API of this server (same origin,
 * relative paths only). Owns the access token (kept in sessionStorage, never elsewhere), the
 * `Authorization` header, reading the standard envelope, and turning error answers into
 * `ApiError`s. A 401 answer calls the handler set with `onUnauthorized` (the sign-in form).
 */

const TOKEN_KEY = 'tenx.console.token';

/** The stored token, or '' when there is none. */
export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

/** Stores `token` for this tab's session. */
export function setToken(token) {
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    /* storage refused (private mode): the token lives only as long as this page */
  }
}

/** Forgets the token. */
export function clearToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* nothing stored */
  }
}

/**
 * The claims of the stored token, read for display only ("signed in as alice"); the server
 * verifies the token, the console never trusts what it says. `null` when unreadable.
 */
export function tokenClaims() {
  const token = getToken();
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (char) => char.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

/** An error answer of the API: its HTTP status, code, message and details. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details ?? null;
  }
}

let unauthorized = () => {};

/** Sets what happens when the server answers 401 (the console shows its sign-in form). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/**
 * Calls the API: `method` on `path` with an optional JSON `body`. Answers the envelope's `data`,
 * or the `Response` itself with `raw` (for the export). Throws `ApiError` for an error answer
 * and for a server that cannot be reached; an aborted call throws the browser's `AbortError`.
 */
export async function request(method, path, body, { signal, raw = false } = {}) {
  const headers = { Accept: raw ? '*/*' : 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    });
  } catch (error) {
    if (error && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'NETWORK_ERROR', 'the server could not be reached', null);
  }
  if (raw && response.ok) return response;
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const error = (payload && payload.error) || {};
    const failure = new ApiError(
      response.status,
      error.code || `HTTP_${response.status}`,
      error.message || response.statusText || 'the request failed',
      error.details,
    );
    if (response.status === 401) unauthorized(failure);
    throw failure;
  }
  return payload && typeof payload === 'object' && 'data' in payload ? payload.data : payload;
}

const id = (interruptId) => encodeURIComponent(interruptId);

/** The approvals API, one function per route. */
export const api = {
  /** `GET /v1/approvals`: `{anyone_may_approve, server_time_ms, approvals, batch}`. */
  list: (offset, limit, options) =>
    request('GET', `/v1/approvals?offset=${offset}&limit=${limit}`, undefined, options),
  /** `GET /v1/approvals/{id}`: the `Detail`. */
  detail: (interruptId, options) => request('GET', `/v1/approvals/${id(interruptId)}`, undefined, options),
  /** `POST /v1/approvals/{id}/answer` with the resume value and an optional note. */
  answer: (interruptId, resume, note) =>
    request('POST', `/v1/approvals/${id(interruptId)}/answer`, note ? { resume, note } : { resume }),
  /** `POST /v1/approvals/{id}/escalate`: answers the new `Detail`. */
  escalate: (interruptId, toRole, note) =>
    request('POST', `/v1/approvals/${id(interruptId)}/escalate`, { to_role: toRole, note }),
  /** `POST /v1/approvals/batch`: approves each id, in order. */
  batch: (interruptIds, note) =>
    request('POST', '/v1/approvals/batch', note ? { interrupt_ids: interruptIds, note } : { interrupt_ids: interruptIds }),
  /** `GET /v1/approval-records`: `{records, next_after}`. */
  records: (after, limit, options) =>
    request('GET', `/v1/approval-records?after=${after}&limit=${limit}`, undefined, options),
  /** `GET /v1/approval-records/export`: the raw JSON Lines response. */
  exportRecords: () => request('GET', '/v1/approval-records/export', undefined, { raw: true }),
};
