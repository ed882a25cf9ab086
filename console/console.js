// The resourcedir console: plain DOM code over the server's own HTTP API.
// Every action goes through /api/v2 or /__admin exactly as a client's would.
'use strict';

// The page is served at / and at /ns/{name}/; the API lives under the same
// prefix, so a namespace's console talks to that namespace.
const base = location.pathname.replace(/\/+$/, '');
const nsMatch = base.match(/^\/ns\/([^/]+)$/);

// The server writes the list's columns, the form's text fields and the
// requestor types into the page from its tables, so that the console shows
// every field and type the server has.
const columns = document.getElementById('resources-head').dataset.columns.split(' ');
const sortable = new Set(columns.filter((c) => c !== 'Types' && c !== 'Id'));
const stringProps = document.getElementById('resource-form').dataset.props.split(' ');
const typeNames = document.getElementById('types-boxes').dataset.types.split(' ');

// Every call of the console carries this header, and the server neither
// journals it nor answers it with a fault: the console observes and never
// takes part, so a test sees the same with or without a console open.
const consoleHeader = 'X-Resourcedir-Console';

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// api sends one request and resolves to {status, body, headers}; it never
// throws for an HTTP status, only for a network failure.
async function api(method, path, body, signal) {
  return request(method, base + path, body, signal);
}

// request is api for a server-wide path, outside the namespace.
async function request(method, url, body, signal) {
  const init = { method, headers: { [consoleHeader]: '1' }, signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
  return { status: res.status, body: parsed, headers: res.headers };
}

function messageOf(r) {
  if (r.body && typeof r.body === 'object' && r.body.Message) return r.body.Message;
  return 'The server answered ' + r.status + '.';
}

let toastTimer;
function toast(text, kind) {
  const t = $('toast');
  t.textContent = text;
  t.className = 'toast ' + (kind || '');
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 4000);
}

// ---------------------------------------------------------------- directory

const state = { page: 1, pageSize: 10, sortField: '', sortDir: 'asc', filter: '', totalPages: 0, rows: [] };
let listController;

function buildHead() {
  const tr = $('resources-head');
  tr.textContent = '';
  for (const c of columns) {
    const th = el('th', { scope: 'col', class: 'col-' + c });
    if (sortable.has(c)) {
      const active = state.sortField === c;
      if (active) th.setAttribute('aria-sort', state.sortDir === 'asc' ? 'ascending' : 'descending');
      const arrow = active ? (state.sortDir === 'asc' ? '▲' : '▼') : '↕';
      th.append(el('button', { type: 'button', class: 'sort' + (active ? ' active' : ''), onclick: () => sortBy(c) },
        c, el('span', { class: 'arrow', 'aria-hidden': 'true', text: arrow })));
    } else {
      th.textContent = c;
    }
    tr.append(th);
  }
}

function sortBy(field) {
  if (state.sortField !== field) {
    state.sortField = field;
    state.sortDir = 'asc';
  } else if (state.sortDir === 'asc') {
    state.sortDir = 'desc';
  } else {
    state.sortField = '';
  }
  state.page = 1;
  buildHead();
  loadList();
}

async function loadList() {
  const q = new URLSearchParams();
  q.set('requestParams.page', String(state.page));
  q.set('requestParams.pageSize', String(state.pageSize));
  if (state.sortField) q.set('requestParams.sorts', state.sortField + '-' + state.sortDir);
  if (state.filter.trim()) q.set('requestParams.filters', state.filter);
  if (listController) listController.abort();
  listController = new AbortController();
  let r;
  try {
    r = await api('GET', '/api/v2/resource?' + q.toString(), undefined, listController.signal);
  } catch (e) {
    if (e.name !== 'AbortError') toast('The server cannot be reached.', 'bad');
    return;
  }
  if (r.status === 400 && r.body && r.body.ModelState && r.body.ModelState['requestParams.filters']) {
    showFilterError(r.body.ModelState['requestParams.filters'][0] || messageOf(r));
    return;
  }
  if (r.status !== 200) {
    showFilterError(null);
    toast('Listing failed: ' + messageOf(r), 'bad');
    return;
  }
  showFilterError(null);
  const body = r.body;
  if (body.TotalPages > 0 && state.page > body.TotalPages) {
    state.page = body.TotalPages; // the last page emptied under us (a reset, a filter)
    loadList();
    return;
  }
  state.totalPages = body.TotalPages;
  state.total = body.TotalResults;
  state.rows = body.ResourceList;
  renderRows();
  $('total').textContent = body.TotalResults === 1 ? '1 resource' : body.TotalResults + ' resources';
  $('page-info').textContent = body.TotalPages === 0 ? 'No pages' : 'Page ' + body.Page + ' of ' + body.TotalPages;
  $('prev').disabled = state.page <= 1;
  $('next').disabled = state.page >= body.TotalPages;
}

function renderRows() {
  const tbody = $('resources-body');
  tbody.textContent = '';
  for (const res of state.rows) {
    const tr = el('tr', { 'data-id': res.Id });
    if (editing && editing.Id === res.Id) tr.className = 'editing';
    for (const c of columns) {
      const td = el('td', { class: 'col-' + c });
      const v = res[c];
      if (c === 'Id') {
        // The start of a GUID tells rows apart; the whole of it is the title.
        td.append(el('span', { class: 'id', title: v, text: String(v).slice(0, 8) }));
      } else if (c === 'Types') {
        for (const t of v || []) td.append(el('span', { class: 'chip', text: t.Type }), ' ');
      } else if (c === 'Status') {
        td.append(el('span', { class: 'badge ' + (v === 'Active' ? 'ok' : 'off'), text: v }));
      } else if (v === null || v === undefined) {
        td.append(el('span', { class: 'null', text: 'null' }));
      } else if (v === '') {
        td.append(el('span', { class: 'null', text: '""' }));
      } else if (c === 'DisplayName') {
        // The name opens the resource in the form; its accessible name
        // begins with the action, as a screen reader user expects.
        td.append(el('button', { type: 'button', class: 'name', title: 'Edit ' + v + ' (' + res.Id + ')',
          'aria-label': 'Edit ' + v, onclick: () => startEdit(res) }, v));
      } else if (c === 'Email') {
        // Break an address after its @ and dots rather than anywhere.
        td.title = v;
        String(v).split(/(?<=[@.])/).forEach((part, i) => { if (i) td.append(el('wbr')); td.append(part); });
      } else {
        td.textContent = v;
        td.title = v;
      }
      tr.append(td);
    }
    tbody.append(tr);
  }
  $('empty').hidden = state.rows.length > 0;
  const bare = !state.filter.trim();
  $('empty-text').textContent = bare
    ? 'The directory is empty. Create a resource with the form, seed some with POST /__admin/resources, or add sample data.'
    : 'No resource matches the filter.';
  $('sample').hidden = !bare;
}

// Sample data for a demo that starts from an empty directory: the server's
// generator (POST /__admin/generate), the same realistic data, awkward
// names included, that `resourcedir generate` writes for tests.
const sampleCount = 25;

async function addSampleData() {
  const r = await api('POST', '/__admin/generate', { Count: sampleCount, Seed: 1 });
  if (r.status !== 200) {
    toast('Adding sample data failed: ' + messageOf(r), 'bad');
    return;
  }
  toast('Added ' + sampleCount + ' sample resources.', 'good');
  await loadList();
  refreshHealth();
}

// showFilterError shows the server's message and marks the character it
// names ("filter: at character N: …"); null clears it.
function showFilterError(message) {
  const input = $('filter');
  const mark = $('filter-mark');
  const out = $('filter-error');
  if (!message) {
    input.removeAttribute('aria-invalid');
    out.textContent = '';
    mark.hidden = true;
    return;
  }
  input.setAttribute('aria-invalid', 'true');
  out.textContent = message;
  const m = /at character (\d+)/.exec(message);
  if (!m) {
    mark.hidden = true;
    return;
  }
  // The server counts Unicode characters from 1; JavaScript strings count
  // UTF-16 units, so split into code points first.
  const chars = Array.from(state.filter);
  const pos = Math.max(1, Number(m[1]));
  mark.textContent = '';
  mark.append(el('span', { text: chars.slice(0, pos - 1).join('') }));
  mark.append(el('mark', { class: 'at', title: 'character ' + pos, text: pos <= chars.length ? chars[pos - 1] : ' ' }));
  mark.append(el('span', { text: chars.slice(pos).join('') }));
  mark.append(el('span', { class: 'caret-note', text: '  ← character ' + pos }));
  mark.hidden = false;
  if (document.activeElement === input) {
    const unit = chars.slice(0, pos - 1).join('').length;
    input.setSelectionRange(unit, Math.min(unit + (chars[pos - 1] || '').length, input.value.length));
  }
}

let filterTimer;
function onFilterInput() {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(applyFilter, 350);
}
function applyFilter() {
  clearTimeout(filterTimer);
  const value = $('filter').value;
  if (value === state.filter && !$('filter').hasAttribute('aria-invalid')) return;
  state.filter = value;
  state.page = 1;
  loadList();
}

// ---------------------------------------------------------------- the form

let editing = null; // the resource being edited, or null when creating

// The types are toggle buttons in the role of checkboxes: named by their
// content, not by a label, so that the type "Company" does not share a label
// with the Company field.
function buildTypeBoxes() {
  const box = $('types-boxes');
  for (const t of typeNames) {
    const b = el('button', { type: 'button', role: 'checkbox', 'aria-checked': 'false', class: 'chip-check', id: 'type-' + t, text: t });
    b.addEventListener('click', () => setTypeChecked(t, b.getAttribute('aria-checked') !== 'true'));
    box.append(b);
  }
}

function typeChecked(t) { return $('type-' + t).getAttribute('aria-checked') === 'true'; }
function setTypeChecked(t, on) { $('type-' + t).setAttribute('aria-checked', on ? 'true' : 'false'); }

function statusValue() { return document.querySelector('#f-Status input:checked').value; }
function setStatusValue(v) { for (const r of document.querySelectorAll('#f-Status input')) r.checked = r.value === v; }

function fieldError(prop) {
  let p = $('err-' + prop);
  if (!p) {
    const input = $('f-' + prop);
    p = el('p', { id: 'err-' + prop, class: 'field-error' });
    (input.tagName === 'FIELDSET' ? input : input.parentElement).append(p);
    input.setAttribute('aria-describedby', p.id);
  }
  return p;
}

function clearFormErrors() {
  for (const p of document.querySelectorAll('#resource-form .field-error')) p.textContent = '';
  for (const i of document.querySelectorAll('#resource-form [aria-invalid]')) i.removeAttribute('aria-invalid');
  $('form-error').hidden = true;
}

// showModelState puts each message beside its property's field; keys such
// as "Types[0].Type" go to their top-level property, unknown ones on top.
function showModelState(r) {
  clearFormErrors();
  const ms = (r.body && r.body.ModelState) || {};
  const loose = [];
  for (const [key, msgs] of Object.entries(ms)) {
    const top = key.split(/[.[]/)[0];
    const prop = [...stringProps, 'Status', 'Types'].find((p) => p.toLowerCase() === top.toLowerCase());
    if (!prop) {
      loose.push(key + ': ' + msgs.join(' '));
      continue;
    }
    const p = fieldError(prop);
    p.textContent = (p.textContent ? p.textContent + ' ' : '') + msgs.join(' ');
    $('f-' + prop).setAttribute('aria-invalid', 'true');
  }
  const fe = $('form-error');
  fe.textContent = messageOf(r) + (loose.length ? ' ' + loose.join(' ') : '');
  fe.hidden = false;
  const first = document.querySelector('#resource-form [aria-invalid="true"]');
  if (first && first.tagName !== 'FIELDSET') first.focus();
}

function formBody() {
  const body = {};
  for (const p of stringProps) {
    const v = $('f-' + p).value;
    body[p] = v === '' ? null : v;
  }
  body.Status = statusValue();
  body.Types = typeNames.filter(typeChecked).map((t) => ({ Type: t }));
  return body;
}

function fillForm(res) {
  for (const p of stringProps) $('f-' + p).value = res ? (res[p] ?? '') : '';
  setStatusValue(res ? res.Status : 'Active');
  const have = new Set(((res && res.Types) || []).map((t) => t.Type));
  for (const t of typeNames) setTypeChecked(t, have.has(t));
}

function setMode(res) {
  editing = res;
  $('create').hidden = !!res;
  $('save').hidden = !res;
  $('cancel-edit').hidden = !res;
  $('form-title').textContent = res ? 'Edit ' + (res.DisplayName || 'resource') : 'New resource';
  $('form-mode-note').textContent = res ? 'PUT /api/v2/resource/' + res.Id : 'POST /api/v2/resource';
  renderRows();
}

function startEdit(res) {
  clearFormErrors();
  fillForm(res);
  setMode(res);
  $('form-title').scrollIntoView({ behavior: 'smooth', block: 'start' });
  $('f-DisplayName').focus({ preventScroll: true });
}

function stopEdit() {
  clearFormErrors();
  fillForm(null);
  setMode(null);
}

async function submitForm(ev) {
  ev.preventDefault();
  const body = formBody();
  let r;
  try {
    if (editing) {
      // A full PUT: every editable key, as the real service requires.
      body.Id = editing.Id;
      r = await api('PUT', '/api/v2/resource/' + encodeURIComponent(editing.Id), body);
    } else {
      r = await api('POST', '/api/v2/resource', body);
    }
  } catch {
    toast('The server cannot be reached.', 'bad');
    return;
  }
  // A create answers 201 (200 under -create-status 200), an update 200.
  if (r.status !== 200 && r.status !== 201) {
    showModelState(r);
    return;
  }
  const saved = editing ? r.body : r.body.Data[0];
  toast((editing ? 'Saved ' : 'Created ') + (saved.DisplayName || saved.Id) + '.', 'good');
  stopEdit();
  await loadList();
  const row = document.querySelector('tr[data-id="' + CSS.escape(saved.Id) + '"]');
  if (row) {
    row.classList.add('flash');
    setTimeout(() => row.classList.remove('flash'), 1600);
  }
  refreshHealth();
}

// ---------------------------------------------------------------- requests

const journal = { entries: [], lastSeq: 0, seqMode: null, seen: new Set(), off: false };
const maxShown = 200;
const openEntries = new Set(); // entries the user opened survive a re-render

function entryKey(e) {
  return e.Seq !== undefined ? 'seq:' + e.Seq : e.RequestId + '|' + e.Time + '|' + e.Method + '|' + e.Path;
}

function addEntries(list) {
  let wrote = false;
  let added = 0;
  for (const e of list) {
    const k = entryKey(e);
    if (journal.seen.has(k)) continue;
    added++;
    journal.seen.add(k);
    journal.entries.push(e);
    if (typeof e.Seq === 'number') journal.lastSeq = Math.max(journal.lastSeq, e.Seq);
    if (e.Method !== 'GET' && e.Method !== 'HEAD') wrote = true;
  }
  if (journal.entries.length > maxShown) {
    const dropped = journal.entries.splice(0, journal.entries.length - maxShown);
    for (const e of dropped) journal.seen.delete(entryKey(e));
  }
  if (added) {
    renderRequests();
    loadFaults(); // a fault that fired counts it; another client may have added one
  }
  // A client's write changes what the table shows: follow it live.
  if (wrote) {
    loadList();
    refreshHealth();
  }
}

function statusClass(s) {
  if (s >= 500) return 's5';
  if (s >= 400) return 's4';
  if (s >= 300) return 's3';
  return 's2';
}

// faultsSeen remembers every fault listed, by Id, so that an entry can be
// told in words after its fault was cleared.
const faultsSeen = new Map();

// outcome says what the client received: {text, fail} with text the status
// or, when it got no answer or not the answer to what was done, words.
function outcome(e) {
  const status = e.Status;
  const delivered = typeof e.Delivered === 'number' ? e.Delivered : status;
  const f = e.Fault !== null && e.Fault !== undefined ? faultsSeen.get(e.Fault) : undefined;
  const kind = f ? f.Kind : '';
  const after = (f && f.After) || (e.Fault != null && status !== delivered && status !== 0 && status !== 499);
  if (after) {
    const got = delivered ? String(delivered) : 'no answer' + (kind && kind !== 'response' ? ' (' + kind + ')' : '');
    return { text: 'write applied, answer lost (After): ' + got, fail: true, code: delivered };
  }
  if (delivered === 0) {
    if (status === 499) {
      return { text: kind === 'hang' || !kind ? 'no answer (hang, client gave up)' : 'no answer (client gave up)', fail: true, code: 0 };
    }
    return { text: 'no answer' + (kind && kind !== 'response' ? ' (' + kind + ')' : ''), fail: true, code: 0 };
  }
  return { text: String(delivered), fail: delivered >= 400, code: delivered };
}

// The list's own filters: by method, by a part of the path, by status
// (503, 5xx, or 0 for no answer).
function entryShown(e) {
  const method = $('req-method').value;
  const path = $('req-path').value.trim().toLowerCase();
  const status = $('req-status').value.trim().toLowerCase();
  if (method && e.Method !== method) return false;
  if (path && !(e.Path + (e.Query ? '?' + decodeQuery(e.Query) : '')).toLowerCase().includes(path)) return false;
  if (status) {
    const codes = [String(typeof e.Delivered === 'number' ? e.Delivered : e.Status), String(e.Status)];
    const m = /^([1-5])xx$/.exec(status);
    if (m ? !codes.some((c) => c.length === 3 && c[0] === m[1]) : !codes.includes(status)) return false;
  }
  return true;
}

function renderRequests() {
  const ol = $('requests');
  const shown = journal.entries.filter(entryShown);
  ol.textContent = '';
  for (const e of shown.slice().reverse()) {
    const ms = typeof e.DurationMs === 'number' ? (e.DurationMs < 10 ? e.DurationMs.toFixed(2) : e.DurationMs.toFixed(0)) + ' ms' : '';
    const out = outcome(e);
    const key = entryKey(e);
    const details = el('details', { class: 'req' + (out.fail ? ' failed' : '') },
      el('summary', { class: 'req-summary' },
        el('div', { class: 'req-line' },
          el('span', { class: 'method m-' + e.Method, text: e.Method }),
          el('span', { class: 'path', title: e.Path, text: e.Path }),
          el('span', { class: 'dur', text: ms })),
        e.Query ? el('div', { class: 'req-query', text: '?' + decodeQuery(e.Query) }) : null,
        el('div', { class: 'req-meta' },
          el('span', { class: 'outcome ' + (out.fail ? 'fail' : statusClass(out.code)), text: out.text }),
          el('span', { text: [new Date(e.Time).toLocaleTimeString(), e.Fault != null ? 'fault ' + e.Fault : ''].filter(Boolean).join(' · ') }))));
    details.addEventListener('toggle', () => {
      if (details.open) openEntries.add(key); else openEntries.delete(key);
      if (details.open && !details.querySelector('.req-detail')) details.append(entryDetail(e));
    });
    if (openEntries.has(key)) details.open = true;
    ol.append(el('li', {}, details));
  }
  $('requests-empty').hidden = shown.length > 0;
  $('requests-empty').textContent = journal.off
    ? 'The journal is off (the server was started with -journal-size 0).'
    : journal.entries.length ? 'No request matches.' : 'Nothing yet. Send a request to /api/v2/resource and it shows here.';
}

function headerLines(h) {
  return Object.entries(h || {}).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => k + ': ' + x)).join('\n');
}

// requestHeaderText is a journal entry's request headers, and what was
// not kept of them: a request refused for its credentials keeps none.
function requestHeaderText(e) {
  const lines = headerLines(e.Headers);
  if (!e.HeadersTruncated) return lines;
  if (!lines) return '(not kept: the request was refused for its credentials)';
  return lines + '\n… (cut at 8 KiB)';
}

function bodyText(b, truncated, cut) {
  if (b === null || b === undefined) return '(empty)';
  return (typeof b === 'string' ? b : JSON.stringify(b, null, 2)) + (truncated ? '\n… (cut at ' + cut + ')' : '');
}

// entryDetail shows an opened request: what was sent, and the answer.
function entryDetail(e) {
  const out = outcome(e);
  const delivered = typeof e.Delivered === 'number' ? e.Delivered : e.Status;
  const answer = e.Response;
  const said = delivered ? 'Answered ' + delivered : out.text.charAt(0).toUpperCase() + out.text.slice(1);
  const did = e.Status !== delivered ? ' · the server did ' + (e.Status || 'nothing') : '';
  const lost = answer && !delivered ? 'The answer that was lost' : 'Answer';
  // The answer first: it is what a debugging session opens a request for.
  return el('div', { class: 'req-detail' },
    el('div', { class: 'detail-actions' },
      el('span', { class: 'detail-id', text: 'Request ' + e.RequestId }),
      el('button', { type: 'button', class: 'small', onclick: () => copyCurl(e) }, 'Copy as curl')),
    el('h3', { class: out.fail ? 'fail' : '', text: said + did }),
    answer ? el('p', { class: 'sub', text: lost }) : null,
    answer ? el('pre', { class: 'headers answer-headers', text: headerLines(answer.Headers) }) : null,
    answer ? el('pre', { class: 'body answer-body', text: bodyText(answer.Body, e.ResponseTruncated, '16 KiB') }) : null,
    el('h3', { text: 'Request' }),
    el('pre', { class: 'headers', text: requestHeaderText(e) }),
    el('pre', { class: 'body', text: bodyText(e.Body, e.BodyTruncated, '64 KiB') }));
}

// The headers a curl command leaves to curl, and the ones it must not repeat.
const curlSkips = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'user-agent', consoleHeader.toLowerCase()]);

function shellQuote(s) { return "'" + String(s).replace(/'/g, "'\\''") + "'"; }

// curlCommand rebuilds the request; a masked Basic credential becomes
// placeholders to fill in (USER too when the journal masked the user
// name: it held no password, so it was the secret).
function curlCommand(e) {
  const url = location.origin + base + e.Path + (e.Query ? '?' + e.Query : '');
  const parts = ['curl'];
  if (e.Method !== 'GET') parts.push('-X', e.Method);
  parts.push(shellQuote(url));
  for (const [name, v] of Object.entries(e.Headers || {})) {
    if (curlSkips.has(name.toLowerCase())) continue;
    for (const value of Array.isArray(v) ? v : [v]) {
      const basic = name === 'Authorization' && /^Basic (?:(.*):)?\*\*\*$/.exec(value);
      if (basic) parts.push('-u', shellQuote((basic[1] ?? 'USER') + ':TOKEN'));
      else parts.push('-H', shellQuote(name + ': ' + value));
    }
  }
  if (e.Body !== null && e.Body !== undefined) parts.push('--data-raw', shellQuote(typeof e.Body === 'string' ? e.Body : JSON.stringify(e.Body)));
  return parts.join(' ');
}

async function copyCurl(e) {
  const cmd = curlCommand(e);
  try {
    await navigator.clipboard.writeText(cmd);
    toast('Copied the curl command.', 'good');
  } catch {
    // No clipboard (permission refused): select it for a manual copy.
    const ta = el('textarea', { class: 'copy-area', readonly: true, 'aria-label': 'curl command' });
    ta.value = cmd;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand && document.execCommand('copy');
    ta.remove();
    toast(ok ? 'Copied the curl command.' : cmd, ok ? 'good' : '');
  }
}

function decodeQuery(q) {
  try { return decodeURIComponent(q.replace(/\+/g, ' ')); } catch { return q; }
}

function setLive(text, ok) {
  $('live-text').textContent = text;
  $('live-state').className = 'live ' + (ok ? 'on' : 'off');
}

// followJournal keeps the list current. With a journal that numbers its
// entries (Seq), one long poll waits for the next entry; with one that does
// not, the list is polled and diffed.
async function followJournal() {
  for (;;) {
    try {
      let r;
      if (journal.seqMode) {
        r = await api('GET', '/__admin/requests?since=' + journal.lastSeq + '&count=1&wait=25s');
      } else {
        r = await api('GET', '/__admin/requests' + (journal.seqMode === null ? '?limit=' + maxShown : ''));
      }
      if (r.status === 400 && journal.seqMode !== false) {
        journal.seqMode = false; // a journal without these filters
        continue;
      }
      if (r.status !== 200) {
        setLive('journal unavailable (' + r.status + ')', false);
        await sleep(2000);
        continue;
      }
      const list = r.body.Requests || [];
      journal.off = r.body.Journal === 'off';
      if (journal.seqMode === null) {
        journal.seqMode = 'Journal' in r.body || list.some((e) => typeof e.Seq === 'number');
      }
      addEntries(list);
      setLive(journal.off ? 'journal off' : 'live', !journal.off);
      if (!journal.seqMode || journal.off) await sleep(journal.off ? 5000 : 700);
    } catch {
      setLive('reconnecting', false);
      await sleep(1500);
    }
  }
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

function clearJournalView() {
  journal.entries = [];
  journal.seen.clear();
  openEntries.clear();
  renderRequests();
}

async function clearJournal() {
  if (!confirm('Clear the journal? The requests recorded so far are forgotten.')) return;
  const r = await api('DELETE', '/__admin/requests');
  if (r.status === 200) {
    clearJournalView();
    toast('Journal cleared.', 'good');
  } else {
    toast('Clearing the journal failed: ' + messageOf(r), 'bad');
  }
}

// ---------------------------------------------------------------- faults

function spent(f) { return f.Times > 0 && f.Fired >= f.Times; }

async function loadFaults() {
  let r;
  try { r = await api('GET', '/__admin/faults'); } catch { return; }
  if (r.status !== 200) return;
  const faults = r.body.Faults || [];
  let changed = false;
  for (const f of faults) {
    const old = faultsSeen.get(f.Id);
    if (!old || old.Kind !== f.Kind || old.After !== f.After) changed = true;
    faultsSeen.set(f.Id, f);
  }
  const ul = $('faults');
  ul.textContent = '';
  for (const f of faults) {
    const used = spent(f);
    const what = f.Kind && f.Kind !== 'response' ? f.Kind : f.Status ? 'answers ' + f.Status : 'delays';
    const extra = [
      f.After ? 'After: the write is applied first' : '',
      f.DelayMs ? 'after ' + f.DelayMs + ' ms' : '',
      f.Headers ? Object.entries(f.Headers).map(([k, v]) => k + ': ' + v).join(', ') : '',
      f.Chance < 1 ? 'chance ' + f.Chance + ' (seed ' + f.Seed + ')' : '',
      f.Match ? 'matching ' + matchText(f.Match) : '',
      f.Skip ? 'lets ' + f.Skip + ' through first' : '',
    ];
    const times = f.Times ? f.Fired + ' of ' + f.Times + ' fired' : f.Fired + ' fired, until cleared';
    ul.append(el('li', { class: 'fault' + (used ? ' spent' : '') },
      el('div', { class: 'fault-line' },
        el('span', { class: 'method m-' + (f.Method || 'ANY'), text: f.Method || 'ANY' }),
        el('span', { class: 'path', text: f.Path }),
        el('span', { class: 'fault-state', text: used ? 'spent' : 'in force' }),
        el('button', { type: 'button', class: 'small ghost', 'aria-label': 'Remove fault ' + f.Id, onclick: () => removeFault(f.Id) }, '✕')),
      el('div', { class: 'fault-meta', text: ['#' + f.Id, what, ...extra, times].filter(Boolean).join(' · ') })));
  }
  const inForce = faults.filter((f) => !spent(f)).length;
  const used = faults.length - inForce;
  $('faults-empty').hidden = faults.length > 0;
  $('faults-count').textContent = faults.length ? inForce + ' in force' + (used ? ', ' + used + ' spent' : '') : '';
  if (changed) renderRequests(); // entries of these faults can now be told in words
}

// matchText says what a fault's Match asks of a request, in one line.
function matchText(m) {
  const parts = [];
  for (const [k, v] of Object.entries(m.Query || {})) parts.push(k + '=' + v);
  for (const [k, v] of Object.entries(m.Headers || {})) parts.push(k + ': ' + v);
  if (m.Body !== undefined) parts.push('body ' + (typeof m.Body === 'string' ? 'contains "' + m.Body + '"' : JSON.stringify(m.Body)));
  return parts.join(', ');
}

// pairs reads lines of name and value split at sep (= or :) into an object.
function pairs(text, sep) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const i = line.indexOf(sep);
    out[(i < 0 ? line : line.slice(0, i)).trim()] = i < 0 ? '' : line.slice(i + 1).trim();
  }
  return out;
}

// faultSpec reads the form: only what was filled in is sent, so that the
// server's defaults apply to the rest and its 400 names what is wrong.
function faultSpec() {
  const spec = { Path: $('fault-Path').value.trim() };
  if ($('fault-Method').value) spec.Method = $('fault-Method').value;
  const kind = $('fault-Kind').value;
  if (kind !== 'response') spec.Kind = kind;
  for (const k of ['Status', 'DelayMs', 'Skip', 'Times', 'Chance', 'Seed']) {
    const input = $('fault-' + k);
    if (input.disabled) continue;
    const raw = input.value.trim();
    if (raw !== '') spec[k] = Number(raw);
  }
  const match = {};
  const query = pairs($('fault-Match.Query').value, '=');
  if (Object.keys(query).length) match.Query = query;
  const matchHeaders = pairs($('fault-Match.Headers').value, ':');
  if (Object.keys(matchHeaders).length) match.Headers = matchHeaders;
  const matchBody = $('fault-Match.Body').value.trim();
  if (matchBody !== '') {
    // A JSON object is properties to have; anything else, text to find.
    try {
      const parsed = JSON.parse(matchBody);
      match.Body = parsed && typeof parsed === 'object' ? parsed : matchBody;
    } catch { match.Body = matchBody; }
  }
  if (Object.keys(match).length) spec.Match = match;
  if (kind === 'response') {
    const headers = pairs($('fault-Headers').value, ':');
    if (Object.keys(headers).length) spec.Headers = headers;
    const body = $('fault-Body').value;
    if (body.trim() !== '') {
      // JSON is sent as JSON; anything else as the text it is.
      try { spec.Body = JSON.parse(body); } catch { spec.Body = body; }
    }
  }
  if ($('fault-After').checked) spec.After = true;
  return spec;
}

function onFaultKind() {
  const response = $('fault-Kind').value === 'response';
  for (const k of ['Status', 'Headers', 'Body']) $('fault-' + k).disabled = !response;
}

async function addFault(ev) {
  ev.preventDefault();
  const fe = $('fault-error');
  fe.hidden = true;
  for (const p of document.querySelectorAll('#fault-form .field-error')) p.remove();
  const spec = faultSpec();
  let r;
  try { r = await api('POST', '/__admin/faults', spec); } catch { toast('The server cannot be reached.', 'bad'); return; }
  if (r.status !== 200) {
    fe.textContent = messageOf(r);
    fe.hidden = false;
    for (const [key, msgs] of Object.entries((r.body && r.body.ModelState) || {})) {
      const input = $('fault-' + key.replace(/^\[\d+\]\./, ''));
      if (input) input.parentElement.append(el('p', { class: 'field-error', text: msgs.join(' ') }));
    }
    return;
  }
  toast('Fault added: ' + (spec.Method || 'any method') + ' ' + spec.Path + '.', 'good');
  loadFaults();
}

async function clearFaults() {
  const r = await api('DELETE', '/__admin/faults');
  if (r.status !== 200) toast('Clearing faults failed: ' + messageOf(r), 'bad');
  else toast('Faults cleared.', 'good');
  loadFaults();
}

async function removeFault(id) {
  const r = await api('DELETE', '/__admin/faults/' + id);
  if (r.status !== 200) toast('Removing fault ' + id + ' failed: ' + messageOf(r), 'bad');
  loadFaults();
}

// ---------------------------------------------------------------- namespaces

const nsName = nsMatch ? decodeURIComponent(nsMatch[1]) : 'default';

// loadNamespaces fills the switcher. The list is server-wide, so it is
// asked of the unprefixed path whichever namespace this page shows.
async function loadNamespaces() {
  let r;
  try { r = await request('GET', '/__admin/namespaces'); } catch { return; }
  if (r.status !== 200) return;
  const select = $('ns-switch');
  const names = (r.body.Namespaces || []).map((n) => n.Name);
  if (!names.includes(nsName)) names.push(nsName);
  select.textContent = '';
  for (const name of names.sort()) select.append(el('option', { value: name, selected: name === nsName, text: name }));
}

function switchNamespace() {
  const name = $('ns-switch').value;
  if (name === nsName) return;
  location.assign(name === 'default' ? '/' : '/ns/' + encodeURIComponent(name) + '/');
}

// ---------------------------------------------------------------- the rest

let lastCount = null;

// refreshHealth shows the resource count; when it changed behind the
// console's back (a seed or reset by a test, which the journal does not
// record), the table follows.
async function refreshHealth() {
  try {
    const r = await api('GET', '/__admin/health');
    if (r.status === 200 && typeof r.body.Resources === 'number') {
      $('health').textContent = r.body.Resources + (r.body.Resources === 1 ? ' resource' : ' resources') + ' stored';
      const shown = !state.filter.trim() && state.total === r.body.Resources; // the table is current already
      const changed = lastCount !== null && lastCount !== r.body.Resources && !shown;
      lastCount = r.body.Resources;
      if (changed) loadList();
    }
  } catch { /* the live list says when the server is gone */ }
}

async function reset() {
  if (!confirm('Reset the ' + nsName + ' namespace? Its resources, journal and faults go back to the start.')) return;
  let r;
  try { r = await api('POST', '/__admin/reset'); } catch { toast('The server cannot be reached.', 'bad'); return; }
  if (r.status !== 200) {
    toast('Reset failed: ' + messageOf(r), 'bad');
    return;
  }
  stopEdit();
  clearJournalView();
  faultsSeen.clear();
  state.page = 1;
  await Promise.all([loadList(), loadFaults(), refreshHealth()]);
  toast('Reset: the directory, the journal and the faults are back to the start.', 'good');
}

function init() {
  $('ns-name').textContent = nsName;
  for (const a of document.querySelectorAll('a[href^="__admin/"]')) a.setAttribute('href', base + '/' + a.getAttribute('href'));
  buildHead();
  buildTypeBoxes();
  $('page-size').value = String(state.pageSize);
  $('filter').addEventListener('input', onFilterInput);
  $('filter').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); applyFilter(); } });
  $('prev').addEventListener('click', () => { if (state.page > 1) { state.page--; loadList(); } });
  $('next').addEventListener('click', () => { if (state.page < state.totalPages) { state.page++; loadList(); } });
  $('page-size').addEventListener('change', () => { state.pageSize = Number($('page-size').value); state.page = 1; loadList(); });
  $('resource-form').addEventListener('submit', submitForm);
  $('cancel-edit').addEventListener('click', stopEdit);
  $('clear-form').addEventListener('click', () => { clearFormErrors(); fillForm(editing); });
  $('fault-form').addEventListener('submit', addFault);
  $('clear-faults').addEventListener('click', clearFaults);
  $('reset').addEventListener('click', reset);
  $('sample').addEventListener('click', addSampleData);
  $('fault-Kind').addEventListener('change', onFaultKind);
  for (const id of ['req-method', 'req-path', 'req-status']) $(id).addEventListener('input', renderRequests);
  $('clear-journal').addEventListener('click', clearJournal);
  $('ns-switch').addEventListener('change', switchNamespace);
  $('ns-switch').addEventListener('focus', loadNamespaces);
  onFaultKind();
  loadList();
  loadFaults();
  refreshHealth();
  loadNamespaces();
  followJournal();
  // Faults added by a test are shown without a reload, even when no request
  // passes; the console's calls are not journaled, so this adds no noise.
  setInterval(() => { loadFaults(); refreshHealth(); }, 3000);
}

init();
