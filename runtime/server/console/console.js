/*
 * console.js: the approval console's entry point. Owns the hash routes (`#/inbox`, the default;
 * `#/approval/<id>`; `#/history`), the sign-in form (shown when the API answers 401; the token
 * is kept in sessionStorage only) and sign-out, the development banner (shown while the server
 * says anyone may approve), the navigation state, focus on each new view, and the one-second
 * tick that keeps ages and countdowns current. The views live in inbox.js, detail.js and
 * history.js.
 */

import { api, clearToken, getToken, onUnauthorized, setToken, tokenClaims } from './api.js';
import { renderDetail } from './detail.js';
import { setServerTime, tick } from './format.js';
import { renderHistory } from './history.js';
import { renderInbox } from './inbox.js';

const view = document.getElementById('view');
const signinView = document.getElementById('signin-view');
const signinForm = document.getElementById('signin');
const tokenInput = document.getElementById('token');
const signinError = document.getElementById('signin-error');
const signout = document.getElementById('signout');
const whoami = document.getElementById('whoami');
const banner = document.getElementById('dev-banner');
const navInbox = document.getElementById('nav-inbox');
const navHistory = document.getElementById('nav-history');

let controller = null;
let modeKnown = false;

/** Shows the development banner while anyone may approve. */
function setMode(anyoneMayApprove) {
  modeKnown = true;
  banner.hidden = !anyoneMayApprove;
}

/** Learns the server's mode for views that do not load the list themselves. */
async function learnMode(signal) {
  if (modeKnown) return;
  try {
    const data = await api.list(0, 1, { signal });
    setServerTime(data.server_time_ms);
    setMode(Boolean(data.anyone_may_approve));
  } catch {
    /* the view itself reports errors; a 401 opens the sign-in form */
  }
}

function showSession() {
  const signedIn = getToken() !== '';
  signout.hidden = !signedIn;
  const claims = signedIn ? tokenClaims() : null;
  if (claims && typeof claims.user_id === 'string') {
    const roles = Array.isArray(claims.roles) ? claims.roles.filter((role) => typeof role === 'string') : [];
    whoami.textContent = `Signed in as ${claims.user_id}${roles.length ? ` (${roles.join(', ')})` : ''}`;
  } else {
    whoami.textContent = signedIn ? 'Signed in' : '';
  }
}

function parseRoute() {
  const hash = location.hash || '#/inbox';
  const approval = /^#\/approval\/(.+)$/.exec(hash);
  if (approval) {
    let id;
    try {
      id = decodeURIComponent(approval[1]);
    } catch {
      id = approval[1];
    }
    return { name: 'approval', id };
  }
  if (hash === '#/history') return { name: 'history' };
  return { name: 'inbox' };
}

function render(focus) {
  if (controller) controller.abort();
  controller = new AbortController();
  const context = { signal: controller.signal, setMode };
  const route = parseRoute();
  signinView.hidden = true;
  view.hidden = false;
  for (const [link, name] of [
    [navInbox, 'inbox'],
    [navHistory, 'history'],
  ]) {
    if (route.name === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (route.name === 'approval') {
    document.title = 'Approval request · tenx console';
    renderDetail(view, context, route.id).then(() => focus && focusHeading());
    learnMode(controller.signal);
  } else if (route.name === 'history') {
    document.title = 'History · tenx console';
    renderHistory(view, context);
    learnMode(controller.signal);
    if (focus) focusHeading();
  } else {
    document.title = 'Inbox · tenx console';
    renderInbox(view, context);
    if (focus) focusHeading();
  }
}

function focusHeading() {
  const heading = view.querySelector('.view-title');
  if (heading) heading.focus();
}

/** The sign-in form, after a 401: the view is hidden until a token is given. */
function showSignin(error) {
  if (!signinView.hidden) return;
  if (controller) controller.abort();
  view.hidden = true;
  view.replaceChildren();
  signinView.hidden = false;
  navInbox.removeAttribute('aria-current');
  navHistory.removeAttribute('aria-current');
  const hadToken = getToken() !== '';
  if (hadToken) clearToken();
  showSession();
  signinError.textContent = hadToken
    ? `The server did not accept the token (${error.code}: ${error.message}). Sign in again.`
    : 'This server requires a token to show its approvals.';
  document.title = 'Sign in · tenx console';
  signinView.querySelector('h1').focus();
}

onUnauthorized(showSignin);

signinForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim().replace(/^Bearer\s+/i, '');
  if (token === '') {
    signinError.textContent = 'Paste a token first.';
    tokenInput.focus();
    return;
  }
  setToken(token);
  tokenInput.value = '';
  signinError.textContent = '';
  modeKnown = false;
  showSession();
  render(true);
});

signout.addEventListener('click', () => {
  clearToken();
  modeKnown = false;
  banner.hidden = true;
  showSession();
  render(true);
});

window.addEventListener('hashchange', () => {
  /* Only `#/…` hashes are routes; others (the skip link's `#main`) move focus as usual. */
  if (location.hash === '' || location.hash.startsWith('#/')) render(true);
});

setInterval(() => tick(document), 1000);
showSession();
render(false);
