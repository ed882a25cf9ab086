// Drives the console in Debian's Chromium against the real binary, finding
// every control by its accessible name, as the contract names them.
'use strict';
const { test, before, after } = require('node:test');
const http = require('node:http');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { start, repo, WAIT_MS } = require('./server');
const { demoResources } = require('./fixtures');
const { toPalettePNG } = require('./png');

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const shotDir = process.env.SCREENSHOT_DIR || fs.mkdtempSync(path.join(os.tmpdir(), 'console-shots-'));

let server;
let browser;

before(async () => {
  server = await start();
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  console.log('screenshots in ' + shotDir);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

async function call(method, p, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(server.url + p, init);
  return { status: res.status, body: await res.json() };
}

// client sends one request as a client under test would, with exactly the
// headers given (node:http adds Host, Connection and Content-Length only).
// A connection that ends without an answer resolves to {error}.
function client(method, p, body, headers = {}, timeoutMs = 0) {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const h = { ...headers };
    if (data !== undefined) h['Content-Type'] = 'application/json';
    const req = http.request(server.url + p, { method, headers: h, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
      res.on('error', (error) => resolve({ error }));
    });
    req.on('error', (error) => resolve({ error }));
    if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new Error('client gave up')));
    req.end(data);
  });
}

// journalNow is the journal as a test reads it.
async function journalNow() {
  return (await call('GET', '/__admin/requests')).body.Requests;
}

// rowTexts gives the DisplayName column of the rows shown.
async function displayNames(page) {
  return page.getByRole('table', { name: 'Resources' }).locator('tbody td.col-DisplayName').allTextContents();
}

// until polls fn until it returns a truthy value, and fails naming what it
// waited for once WAIT_MS has passed.
async function until(fn, what) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('still waiting after ' + WAIT_MS + ' ms for ' + what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('the console drives the directory, the journal and the faults', async (t) => {
  const seeded = await call('POST', '/__admin/resources', demoResources());
  assert.equal(seeded.status, 200);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // The browser logs every 4xx answer; the malformed filter and the invalid
  // create are meant to get theirs.
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 400/.test(m.text())) pageErrors.push(m.text()); });

  await t.test('loads the page with the first page of the directory', async () => {
    const res = await page.goto(server.url + '/');
    assert.equal(res.status(), 200);
    assert.match(res.headers()['content-type'], /^text\/html/);
    const table = page.getByRole('table', { name: 'Resources' });
    await table.waitFor();
    await until(async () => (await displayNames(page)).length === 10, '10 rows');
    assert.deepEqual((await displayNames(page)).slice(0, 2), ['Ada Lovelace Analytical Engines', 'Charles Babbage Analytical Engines']);
    for (const name of ['Id', 'DisplayName', 'FirstName', 'Surname', 'Company', 'Status', 'ExternalID', 'Email', 'Types']) {
      await table.getByRole('columnheader', { name, exact: true }).waitFor();
    }
    await page.getByText('25 resources').first().waitFor();
    // At 1280 px every sortable header shows its arrow whole, and no name or
    // e-mail is cut: a cell's content fits its box (long values wrap).
    const layout = await page.evaluate(() => {
      const headers = [...document.querySelectorAll('#resources th')].map((th) => {
        const arrow = th.querySelector('.arrow');
        if (!arrow) return { name: th.textContent, sortable: false };
        const [a, h] = [arrow.getBoundingClientRect(), th.getBoundingClientRect()];
        return { name: th.textContent, sortable: true, inside: a.width > 0 && a.left >= h.left && a.right <= h.right && th.scrollWidth <= th.clientWidth };
      });
      const cut = [...document.querySelectorAll('#resources td')].filter((td) => td.scrollWidth > td.clientWidth).map((td) => td.className + ': ' + td.textContent);
      return { headers, cut };
    });
    assert.deepEqual(layout.headers.filter((h) => h.sortable).map((h) => h.name.replace(/[↕▲▼]/, '')),
      ['DisplayName', 'FirstName', 'Surname', 'Company', 'Status', 'ExternalID', 'Email']);
    assert.deepEqual(layout.headers.filter((h) => h.sortable && !h.inside), []);
    assert.deepEqual(layout.cut, []);
  });

  await t.test('filters, and shows where a malformed filter broke', async () => {
    const filter = page.getByLabel('Filter');
    await filter.fill("Company~eq~'bell labs'");
    await filter.press('Enter');
    await until(async () => (await displayNames(page)).length === 3, 'three Bell Labs rows');
    assert.deepEqual(await displayNames(page), ['Dennis Ritchie Bell Labs', 'Ken Thompson Bell Labs', 'Claude Shannon Bell Labs']);

    const bad = "Company~eq~'Bell Labs'~and~Status~frob~'Active'";
    await filter.fill(bad);
    await filter.press('Enter');
    const error = page.locator('#filter-error');
    await until(async () => /at character \d+/.test(await error.innerText()), 'the filter error');
    const message = await error.innerText();
    const pos = Number(/at character (\d+)/.exec(message)[1]);
    assert.equal(await filter.getAttribute('aria-invalid'), 'true');
    // The mark sits on the character the server named: the start of "frob".
    assert.equal(Array.from(bad)[pos - 1], 'f', message);
    assert.equal(await page.locator('#filter-mark mark').innerText(), 'f');
    const described = (await filter.getAttribute('aria-describedby')).split(' ');
    assert.ok(described.includes('filter-error'));

    await filter.fill('');
    await filter.press('Enter');
    await until(async () => (await page.locator('#filter-error').innerText()) === '', 'the error to clear');
    assert.equal(await filter.getAttribute('aria-invalid'), null);
    await until(async () => (await displayNames(page)).length === 10, 'the unfiltered page');
  });

  await t.test('sorts by a column header and pages', async () => {
    const table = page.getByRole('table', { name: 'Resources' });
    const header = table.getByRole('columnheader', { name: 'Surname' });
    await header.getByRole('button').click();
    await until(async () => (await header.getAttribute('aria-sort')) === 'ascending', 'ascending sort');
    // null Surnames sort first, then by lower-cased code point.
    await until(async () => (await displayNames(page))[0] === 'Analytical Engines', 'null surname first');
    assert.equal((await displayNames(page))[1], 'Frances Allen IBM Research');
    await header.getByRole('button').click();
    await until(async () => (await header.getAttribute('aria-sort')) === 'descending', 'descending sort');
    await until(async () => (await displayNames(page))[0] === 'Émile Zola', 'Zola first');

    const next = page.getByRole('button', { name: 'Next page' });
    const prev = page.getByRole('button', { name: 'Previous page' });
    assert.equal(await prev.isDisabled(), true);
    await next.click();
    await page.getByText('Page 2 of 3').waitFor();
    await next.click();
    await page.getByText('Page 3 of 3').waitFor();
    await until(async () => (await displayNames(page)).length === 5, 'the last 5 rows');
    assert.equal(await next.isDisabled(), true);
    await prev.click();
    await page.getByText('Page 2 of 3').waitFor();
    await header.getByRole('button').click(); // back to no sort
    await until(async () => (await header.getAttribute('aria-sort')) === null, 'no sort');
    await page.getByText('Page 1 of 3').waitFor();
  });

  await t.test('creates through the form, showing ModelState beside the field', async () => {
    const displayName = page.getByLabel('DisplayName');
    await displayName.fill('x'.repeat(101));
    await page.getByLabel('Company').fill('Difference Engines');
    await page.getByRole('button', { name: 'Create' }).click();
    const err = page.locator('#err-DisplayName');
    await err.waitFor();
    assert.match(await err.innerText(), /100/);
    assert.equal(await displayName.getAttribute('aria-invalid'), 'true');
    assert.equal(await displayName.getAttribute('aria-describedby'), 'err-DisplayName');
    // The error sits in the field's own box, beside the input.
    const [inputBox, errBox] = [await displayName.boundingBox(), await err.boundingBox()];
    assert.ok(errBox.y >= inputBox.y + inputBox.height - 1 && errBox.y - (inputBox.y + inputBox.height) < 30, JSON.stringify({ inputBox, errBox }));

    await displayName.fill('Mary Somerville');
    await page.getByLabel('FirstName').fill('Mary');
    await page.getByLabel('Surname').fill('Somerville');
    await page.getByLabel('Email').fill('mary@example.org');
    await page.getByRole('checkbox', { name: 'Customer' }).click();
    assert.equal(await page.getByRole('checkbox', { name: 'Customer' }).isChecked(), true);
    await page.getByRole('button', { name: 'Create' }).click();
    await until(async () => (await call('GET', '/__admin/health')).body.Resources === 26, 'the create');
    await until(async () => (await err.count()) === 0 || (await err.innerText()) === '', 'the error to clear');

    const filter = page.getByLabel('Filter');
    await filter.fill("Surname~eq~'Somerville'");
    await filter.press('Enter');
    await until(async () => JSON.stringify(await displayNames(page)) === '["Mary Somerville"]', 'the new row');
    const row = page.getByRole('row', { name: /Mary Somerville/ });
    assert.match(await row.innerText(), /Difference Engines/);
    assert.match(await row.innerText(), /Customer/);
  });

  await t.test('edits and saves with a full PUT', async () => {
    await page.getByRole('button', { name: 'Edit Mary Somerville' }).click();
    const company = page.getByLabel('Company');
    assert.equal(await company.inputValue(), 'Difference Engines');
    await company.fill('Royal Society');
    await page.getByRole('group', { name: 'Status' }).getByLabel('Inactive').check();
    // The console's calls are not journaled: what it sent is read off the wire.
    const sent = page.waitForRequest((r) => r.method() === 'PUT');
    await page.getByRole('button', { name: 'Save' }).click();
    const put = (await sent).postDataJSON();
    const row = page.getByRole('row', { name: /Mary Somerville/ });
    await until(async () => /Royal Society/.test(await row.innerText()), 'the saved row');
    assert.match(await row.innerText(), /Inactive/);
    const listed = (await call('GET', '/__admin/resources')).body;
    const all = Array.isArray(listed) ? listed : listed.Data;
    const mary = all.find((r) => r.Surname === 'Somerville');
    assert.equal(mary.Company, 'Royal Society');
    assert.equal(mary.Email, 'mary@example.org');
    assert.deepEqual(mary.Types, [{ Id: 4, Type: 'Customer' }]);
    // The form's request was the full PUT, and the journal did not record it.
    assert.deepEqual((await journalNow()).filter((e) => e.Method === 'PUT'), []);
    assert.deepEqual(Object.keys(put).sort(), ['AddressComment', 'Company', 'ContractorOrganization', 'DisplayName', 'Email', 'ExternalID',
      'Fax', 'FirstName', 'Id', 'Mobile', 'Phone', 'Position', 'Status', 'Surname', 'Types']);
    const filter = page.getByLabel('Filter');
    await filter.fill('');
    await filter.press('Enter');
  });

  await t.test('shows a request sent by another client with no timer in between', async () => {
    // The contract says within a second, a wall-clock bound that a loaded
    // machine breaks. What makes it hold is checked instead: in a page whose
    // clock is stopped, so that none of its timeouts or intervals fires,
    // requests still show, one after the other, and the clock has not moved.
    // The page keeps a long poll open on the journal, shows its answer at
    // once and opens the next.
    const frozenContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await frozenContext.clock.install();
    const frozen = await frozenContext.newPage();
    await frozen.goto(server.url + '/');
    await until(async () => (await frozen.locator('#live-text').innerText()) === 'live', 'the page to follow the journal');
    const stopped = Date.now() + 3600 * 1000; // later than the page's clock, which runs until now
    await frozen.clock.pauseAt(stopped);
    let marker;
    for (const n of [1, 2]) {
      marker = 'probe' + n + '-' + Date.now();
      const res = await fetch(server.url + "/api/v2/resource?requestParams.filters=" + encodeURIComponent("ExternalID~eq~'" + marker + "'"));
      assert.equal(res.status, 200);
      await frozen.getByRole('list', { name: 'Requests' }).getByText(marker).first().waitFor({ timeout: WAIT_MS }).catch((e) => {
        throw new Error('request ' + n + ' did not show while the page\'s clock was stopped: showing it waits for a timer (' + e.message.split('\n')[0] + ')');
      });
    }
    assert.equal(await frozen.evaluate(() => Date.now()), stopped, 'the stopped page clock moved');
    await frozenContext.close();

    const requests = page.getByRole('list', { name: 'Requests' });
    await requests.getByText(marker).first().waitFor({ timeout: WAIT_MS });
    const item = requests.getByRole('listitem').filter({ hasText: marker }).first();
    assert.match(await item.innerText(), /GET/);
    assert.match(await item.innerText(), /200/);
    assert.match(await item.innerText(), /ms/);

    // A body on demand: the request opens to what was sent and the answer.
    const post = await call('POST', '/api/v2/resource', { Company: 'Body Shop ' + marker });
    assert.equal(post.status, 201);
    const postItem = requests.getByRole('listitem').filter({ hasText: 'POST' }).first();
    await postItem.waitFor({ timeout: WAIT_MS });
    await postItem.locator('summary').click();
    await postItem.locator('pre.body').last().getByText('Body Shop ' + marker).waitFor();
    assert.match(await postItem.locator('.answer-body').innerText(), new RegExp('"Id": "' + post.body.Data[0].Id + '"'));
    await postItem.locator('summary').click();
  });

  await t.test('adds a fault, shows it, clears it', async () => {
    const faults = page.getByRole('list', { name: 'Faults in force' });
    const form = page.getByRole('form', { name: 'Add a fault' });
    await form.getByLabel('Method', { exact: true }).selectOption('GET');
    await form.getByLabel('Path', { exact: true }).fill('/api/v2/resource');
    await form.getByLabel('Status', { exact: true }).fill('503');
    await form.getByLabel('Times', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Add fault' }).click();
    const item = faults.getByRole('listitem').first();
    await item.waitFor();
    assert.match(await item.innerText(), /GET/);
    assert.match(await item.innerText(), /\/api\/v2\/resource/);
    assert.match(await item.innerText(), /503/);
    const list = (await call('GET', '/__admin/faults')).body.Faults;
    assert.equal(list.length, 1);
    assert.equal(list[0].Status, 503);
    assert.equal(list[0].Times, 2);
    // It fires: the next client request answers 503 and the live list says so.
    const res = await fetch(server.url + '/api/v2/resource?faulted=1');
    assert.equal(res.status, 503);
    await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').filter({ hasText: 'faulted=1' }).filter({ hasText: '503' }).first().waitFor({ timeout: WAIT_MS });

    // The view a demo opens on: the top of the page, no passing toast.
    await page.evaluate(() => { window.scrollTo(0, 0); document.getElementById('toast').hidden = true; });
    await page.locator('.table-wrap').evaluate((e) => { e.scrollLeft = 0; });
    await page.screenshot({ path: path.join(shotDir, 'console-1280x800.png') });

    await page.getByRole('button', { name: 'Clear faults' }).click();
    await until(async () => (await faults.getByRole('listitem').count()) === 0, 'no faults');
    assert.deepEqual((await call('GET', '/__admin/faults')).body.Faults, []);
  });

  await t.test('fits a narrow window', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('table', { name: 'Resources' }).waitFor();
    // Nothing but the table's own scroller may be wider than the window.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(overflow <= 390, 'page is ' + overflow + 'px wide');
    for (const name of ['Create', 'Reset', 'Next page', 'Previous page']) {
      const box = await page.getByRole('button', { name, exact: true }).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 390, name + ' is off screen: ' + JSON.stringify(box));
    }
    await page.evaluate(() => { window.scrollTo(0, 0); document.getElementById('toast').hidden = true; });
    await page.screenshot({ path: path.join(shotDir, 'console-390x844.png') });
    // Scrolled sideways, the names stay in view and the e-mails read whole.
    await page.locator('.table-wrap').evaluate((e) => { e.scrollLeft = e.scrollWidth; });
    await page.screenshot({ path: path.join(shotDir, 'console-390x844-right.png') });
    await page.locator('.table-wrap').evaluate((e) => { e.scrollLeft = 0; });
    await page.screenshot({ path: path.join(shotDir, 'console-390-full.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await t.test('resets, once confirmed', async () => {
    const reset = page.getByRole('button', { name: 'Reset', exact: true });
    // Dismissed: nothing happens.
    const before = (await call('GET', '/__admin/health')).body.Resources;
    assert.ok(before > 0);
    const asked = [];
    const sent = [];
    page.on('request', (r) => sent.push(r.url()));
    page.once('dialog', (d) => { asked.push(d.type() + ': ' + d.message()); d.dismiss(); });
    await reset.click();
    await until(async () => asked.length === 1, 'the confirmation');
    assert.match(asked[0], /^confirm: Reset the default namespace\?/);
    // The click's handler ran to its end (a call issued after it is seen
    // after this one), and sent no reset.
    await page.evaluate(() => fetch('/__admin/health', { headers: { 'X-Resourcedir-Console': '1' } }));
    assert.deepEqual(sent.filter((u) => u.endsWith('/__admin/reset')), []);
    assert.equal((await call('GET', '/__admin/health')).body.Resources, before);
    assert.ok(await page.getByText(before + ' resources').first().isVisible());

    page.once('dialog', (d) => d.accept());
    await reset.click();
    await until(async () => (await displayNames(page)).length === 0, 'an empty table');
    await page.getByText('0 resources').first().waitFor();
    assert.equal((await call('GET', '/__admin/health')).body.Resources, 0);
    assert.equal(await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').count(), 0);

    // An empty directory offers sample data, so that a demo has something to show.
    await page.getByRole('button', { name: 'Add sample data' }).click();
    await until(async () => (await displayNames(page)).length === 10, 'the sample rows');
    assert.equal((await call('GET', '/__admin/health')).body.Resources, 25); // POST /__admin/generate
    assert.equal(await page.getByRole('button', { name: 'Add sample data' }).isVisible(), false);

    // A test that empties the directory through the admin API (which the
    // journal does not record) is followed without a reload.
    assert.equal((await call('DELETE', '/__admin/resources')).status, 200);
    await until(async () => (await displayNames(page)).length === 0, 'the table to follow the deletion');
  });

  assert.deepEqual(pageErrors, []);
  await context.close();
});

// openConsole starts a page on the console at 1280x800, once its live list
// is following the journal; pageErrors collects what the page reports.
async function openConsole(url, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  await page.goto(url || server.url + '/');
  await page.getByRole('table', { name: 'Resources' }).waitFor();
  await until(async () => (await page.locator('#live-text').innerText()) === 'live', 'the live list');
  return { context, page, pageErrors };
}

// entry finds the list item of the client request whose query holds marker.
function entry(page, marker) {
  return page.getByRole('list', { name: 'Requests' }).getByRole('listitem').filter({ hasText: marker });
}

test('the console observes and never takes part', async () => {
  assert.equal((await call('POST', '/__admin/reset')).status, 200);
  const { context, page, pageErrors } = await openConsole();
  const added = await call('POST', '/__admin/faults', { Method: 'POST', Path: '/api/v2/resource', Status: 503, Times: 1 });
  assert.equal(added.status, 200);
  const faults = page.getByRole('list', { name: 'Faults in force' });
  await faults.getByRole('listitem').filter({ hasText: '0 of 1 fired' }).waitFor({ timeout: WAIT_MS });

  // The console creates through the form while the fault is in force: the
  // fault is not its to meet.
  await page.getByLabel('Company').fill('Made by the console');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await until(async () => (await call('GET', '/__admin/health')).body.Resources === 1, 'the console\'s create');

  // The client meets exactly the fault set up for it, and its retry works.
  const first = await client('POST', '/api/v2/resource?try=1', { Company: 'Client' });
  assert.equal(first.status, 503);
  const retry = await client('POST', '/api/v2/resource?try=2', { Company: 'Client' });
  assert.equal(retry.status, 201);

  // The journal holds the client's two requests and nothing of the console's.
  const journal = await journalNow();
  assert.deepEqual(journal.map((e) => [e.Method, e.Path, e.Query, e.Status, e.Delivered, e.Fault]),
    [['POST', '/api/v2/resource', 'try=1', 503, 503, added.body.Faults[0].Id], ['POST', '/api/v2/resource', 'try=2', 201, 201, null]]);
  const listed = (await call('GET', '/__admin/faults')).body.Faults;
  assert.deepEqual(listed.map((f) => f.Fired), [1]);

  // The list shows both; the spent fault is shown as spent.
  await entry(page, 'try=2').waitFor({ timeout: WAIT_MS });
  assert.equal(await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').count(), 2);
  await faults.getByRole('listitem').filter({ hasText: 'spent' }).filter({ hasText: '1 of 1 fired' }).waitFor({ timeout: WAIT_MS });
  assert.equal(await page.locator('#faults-count').innerText(), '0 in force, 1 spent');
  // Another look at the journal after the console kept polling: still two.
  assert.equal((await journalNow()).length, 2);
  assert.deepEqual(pageErrors, []);
  await context.close();
});

test('says in words what each client received, as failures', async () => {
  assert.equal((await call('POST', '/__admin/reset')).status, 200);
  const { context, page, pageErrors } = await openConsole();
  const faults = [
    { Method: 'POST', Path: '/api/v2/resource', Kind: 'reset', Times: 1 },
    { Method: 'POST', Path: '/api/v2/resource', Kind: 'empty', Times: 1 },
    { Method: 'POST', Path: '/api/v2/resource', Kind: 'garbage', Times: 1 },
    { Method: 'POST', Path: '/api/v2/resource', Kind: 'hang', Times: 1 },
    { Method: 'POST', Path: '/api/v2/resource', Status: 503, After: true, Times: 1 },
  ];
  assert.equal((await call('POST', '/__admin/faults', faults)).status, 200);
  for (const [i, want] of [[1, 'error'], [2, 'error'], [3, 'error'], [4, 'error'], [5, 503], [6, 201]]) {
    // The hang's client gives up after 300 ms; no other request waits.
    const r = await client('POST', '/api/v2/resource?n=' + i, { Company: 'Try ' + i }, {}, i === 4 ? 300 : 0);
    assert.equal(r.error ? 'error' : r.status, want, 'request ' + i);
  }
  const words = {
    'n=1': 'no answer (reset)',
    'n=2': 'no answer (empty)',
    'n=3': 'no answer (garbage)',
    'n=4': 'no answer (hang, client gave up)',
    'n=5': 'write applied, answer lost (After)',
  };
  const bad = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--bad').trim());
  for (const [marker, text] of Object.entries(words)) {
    const item = entry(page, marker);
    await item.getByText(text).waitFor({ timeout: WAIT_MS });
    const outcome = item.locator('.outcome');
    assert.match(await outcome.getAttribute('class'), /\bfail\b/, marker);
    assert.equal(await outcome.evaluate((e) => getComputedStyle(e).color), hexToRGB(bad), marker);
  }
  const ok = entry(page, 'n=6').locator('.outcome');
  await ok.waitFor({ timeout: WAIT_MS });
  assert.equal(await ok.innerText(), '201');
  assert.notEqual(await ok.evaluate((e) => getComputedStyle(e).color), hexToRGB(bad));
  // What the journal says, in numbers.
  const journal = await until(async () => { const j = await journalNow(); return j.length === 6 && j; }, 'six entries');
  const byQuery = Object.fromEntries(journal.map((e) => [e.Query, [e.Status, e.Delivered]]));
  assert.deepEqual(byQuery, { 'n=1': [0, 0], 'n=2': [0, 0], 'n=3': [0, 0], 'n=4': [499, 0], 'n=5': [201, 503], 'n=6': [201, 201] });
  // Every fault has fired its one time: all spent, none in force.
  await until(async () => (await page.locator('#faults-count').innerText()) === '0 in force, 5 spent', 'five spent faults');
  assert.equal(await page.getByRole('list', { name: 'Faults in force' }).locator('.fault.spent').count(), 5);

  // An opened After entry shows what the client got and what the server did.
  const after = entry(page, 'n=5');
  await after.locator('summary').click();
  await after.getByText('Answered 503 · the server did 201').waitFor();
  assert.match(await after.locator('.answer-body').innerText(), /Injected fault \d+: POST \/api\/v2\/resource answers 503/);
  await page.screenshot({ path: path.join(shotDir, 'words-1280x800.png') });
  assert.deepEqual(pageErrors, []);
  await context.close();
});

function hexToRGB(hex) {
  const n = parseInt(hex.replace('#', ''), 16);
  return 'rgb(' + (n >> 16) + ', ' + ((n >> 8) & 255) + ', ' + (n & 255) + ')';
}

test('opens a request to its answer, copies it as curl, filters the list', async () => {
  assert.equal((await call('POST', '/__admin/reset')).status, 200);
  const { context, page, pageErrors } = await openConsole();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const created = await client('POST', '/api/v2/resource?step=create', { FirstName: 'Ada', Surname: 'Lovelace' }, { 'X-Trace': 't1' });
  assert.equal(created.status, 201);
  const invalid = await client('POST', '/api/v2/resource?step=invalid', { Position: 'x' });
  assert.equal(invalid.status, 400);
  assert.equal((await client('GET', '/api/v2/resource?step=list')).status, 200);
  await entry(page, 'step=list').waitFor({ timeout: WAIT_MS });

  // The 400's answer: its status, headers and body.
  const bad = entry(page, 'step=invalid');
  await bad.locator('summary').click();
  await bad.getByText('Answered 400').waitFor();
  const headers = await bad.locator('.answer-headers').innerText();
  assert.match(headers, /^Content-Length: \d+$/m);
  assert.match(headers, /^Content-Type: application\/json; charset=utf-8$/m);
  assert.match(headers, /^X-Request-Id: \S+$/m);
  assert.deepEqual(JSON.parse(await bad.locator('.answer-body').innerText()), JSON.parse(invalid.text));

  // Copied as curl: the request as the client sent it.
  const good = entry(page, 'step=create');
  await good.locator('summary').click();
  await good.getByRole('button', { name: 'Copy as curl' }).click();
  await page.getByText('Copied the curl command.').waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, "curl -X POST '" + server.url + "/api/v2/resource?step=create' -H 'Content-Type: application/json' -H 'X-Trace: t1' " +
    `--data-raw '{"FirstName":"Ada","Surname":"Lovelace"}'`);

  // The filters: by method, by path, by status.
  const list = page.getByRole('list', { name: 'Requests' });
  const shown = async () => (await list.locator('.req-query').allInnerTexts()).map((q) => q.replace('?', ''));
  await page.getByLabel('Show only the method').selectOption('GET');
  await until(async () => JSON.stringify(await shown()) === '["step=list"]', 'GETs only');
  await page.getByLabel('Show only the method').selectOption('');
  await page.getByLabel('Show only the status').fill('4xx');
  await until(async () => JSON.stringify(await shown()) === '["step=invalid"]', '4xx only');
  await page.getByLabel('Show only the status').fill('201');
  await until(async () => JSON.stringify(await shown()) === '["step=create"]', '201s only');
  await page.getByLabel('Show only the status').fill('2xx');
  await until(async () => JSON.stringify(await shown()) === '["step=list","step=create"]', '2xx only');
  await page.getByLabel('Show only paths containing').fill('step=cr');
  await until(async () => JSON.stringify(await shown()) === '["step=create"]', 'one path');
  await page.getByLabel('Show only paths containing').fill('/api/v2/nothing');
  await page.getByText('No request matches.').waitFor();
  await page.getByLabel('Show only paths containing').fill('');
  await page.getByLabel('Show only the status').fill('');
  await until(async () => (await shown()).length === 3, 'all three again');

  // Clear journal asks first; dismissed, it keeps the entries.
  const dialogs = [];
  page.once('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  await page.getByRole('button', { name: 'Clear journal' }).click();
  await until(async () => dialogs.length === 1, 'the confirmation');
  assert.match(dialogs[0], /^Clear the journal\?/);
  assert.equal((await journalNow()).length, 3);
  assert.equal((await shown()).length, 3);
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Clear journal' }).click();
  await until(async () => (await shown()).length === 0, 'an empty list');
  assert.deepEqual(await journalNow(), []);
  assert.deepEqual(pageErrors, []);
  await context.close();
});

test('the fault form offers every property, and builds an After fault with Headers', async () => {
  assert.equal((await call('POST', '/__admin/reset')).status, 200);
  const { context, page, pageErrors } = await openConsole();
  const form = page.getByRole('form', { name: 'Add a fault' });
  for (const name of ['Method', 'Path', 'Match query', 'Match headers', 'Match body', 'Skip', 'Kind', 'Status', 'Headers', 'Body', 'DelayMs', 'Times', 'Chance', 'Seed', 'After']) {
    assert.equal(await form.getByLabel(name, { exact: true }).count(), 1, name);
  }
  await form.getByLabel('Method', { exact: true }).selectOption('POST');
  await form.getByLabel('Path', { exact: true }).fill('/api/v2/resource');
  await form.getByLabel('Kind', { exact: true }).selectOption('response');
  await form.getByLabel('Status', { exact: true }).fill('503');
  await form.getByLabel('Headers', { exact: true }).fill('Retry-After: 2\nx-why: lost');
  await form.getByLabel('Body', { exact: true }).fill('{"Message": "later"}');
  await form.getByLabel('Times', { exact: true }).fill('1');
  await form.getByLabel('Chance', { exact: true }).fill('1');
  await form.getByLabel('Seed', { exact: true }).fill('7');
  await form.getByLabel('After', { exact: true }).check();
  await form.getByRole('button', { name: 'Add fault' }).click();
  await page.getByRole('list', { name: 'Faults in force' }).getByRole('listitem').filter({ hasText: 'After' }).waitFor({ timeout: WAIT_MS });
  const listed = (await call('GET', '/__admin/faults')).body.Faults;
  assert.deepEqual(listed.map(({ Id, ...f }) => f), [{ Method: 'POST', Path: '/api/v2/resource', Times: 1, Chance: 1, Seed: 7, Kind: 'response', Status: 503,
    Headers: { 'Retry-After': '2', 'X-Why': 'lost' }, Body: { Message: 'later' }, DelayMs: 0, After: true, Fired: 0 }]);

  // It does what it says: the write is applied, the client gets the 503.
  const r = await client('POST', '/api/v2/resource', { Company: 'Applied' });
  assert.equal(r.status, 503);
  assert.equal(r.headers['retry-after'], '2');
  assert.deepEqual(JSON.parse(r.text), { Message: 'later' });
  assert.equal((await call('GET', '/__admin/health')).body.Resources, 1);

  // A kind that writes no HTTP answer leaves Status, Headers and Body out.
  await form.getByLabel('Kind', { exact: true }).selectOption('reset');
  for (const name of ['Status', 'Headers', 'Body']) assert.equal(await form.getByLabel(name, { exact: true }).isDisabled(), true, name);
  await form.getByLabel('After', { exact: true }).uncheck();
  await form.getByRole('button', { name: 'Add fault' }).click();
  await until(async () => (await call('GET', '/__admin/faults')).body.Faults.length === 2, 'the second fault');
  const second = (await call('GET', '/__admin/faults')).body.Faults[1];
  assert.deepEqual([second.Kind, second.Status, second.Headers, second.Body, second.After], ['reset', undefined, undefined, undefined, false]);
  assert.deepEqual(pageErrors, []);
  await context.close();
});

test('the fault form builds a fault that matches one create, after letting one through', async () => {
  assert.equal((await call('POST', '/__admin/reset')).status, 200);
  const { context, page, pageErrors } = await openConsole();
  const form = page.getByRole('form', { name: 'Add a fault' });
  await form.getByLabel('Method', { exact: true }).selectOption('POST');
  await form.getByLabel('Path', { exact: true }).fill('*');
  await form.getByLabel('Match query', { exact: true }).fill('source=import');
  await form.getByLabel('Match headers', { exact: true }).fill('X-Tenant: blue');
  await form.getByLabel('Match body', { exact: true }).fill('{"ExternalID": "X-1"}');
  await form.getByLabel('Skip', { exact: true }).fill('1');
  await form.getByLabel('Status', { exact: true }).fill('409');
  await form.getByLabel('Times', { exact: true }).fill('1');
  await form.getByRole('button', { name: 'Add fault' }).click();
  const item = page.getByRole('list', { name: 'Faults in force' }).getByRole('listitem').filter({ hasText: 'lets 1 through first' });
  await item.waitFor({ timeout: WAIT_MS });
  assert.match(await item.innerText(), /matching source=import, X-Tenant: blue, body \{"ExternalID":"X-1"\}/);
  const listed = (await call('GET', '/__admin/faults')).body.Faults;
  assert.deepEqual(listed.map((f) => [f.Path, f.Match, f.Skip]), [['*', { Query: { source: 'import' }, Headers: { 'X-Tenant': 'blue' }, Body: { ExternalID: 'X-1' } }, 1]]);
  // A property the server refuses is shown beside its field.
  await form.getByLabel('Skip', { exact: true }).fill('-1');
  await form.getByRole('button', { name: 'Add fault' }).click();
  await page.locator('#fault-form .field-error').filter({ hasText: 'Skip must be from 0 to' }).waitFor({ timeout: WAIT_MS });
  // The browser logs the 400 it was asked for; nothing else went wrong.
  assert.deepEqual(pageErrors.filter((e) => !/status of 400/.test(e)), []);
  await context.close();
});

test('switches between namespaces; /ns/{name} leads to its console', async () => {
  assert.equal((await call('POST', '/ns/other/__admin/resources', [{ Company: 'Other One' }])).status, 200);
  const { context, page, pageErrors } = await openConsole(server.url + '/ns/other');
  assert.equal(new URL(page.url()).pathname, '/ns/other/');
  await until(async () => JSON.stringify(await displayNames(page)) === '["Other One"]', 'the namespace\'s rows');
  const switcher = page.getByLabel('Namespace');
  await until(async () => (await switcher.locator('option').allInnerTexts()).some((t) => /^default/.test(t)), 'the namespaces');
  const names = await switcher.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(names.includes('default') && names.includes('other'), JSON.stringify(names));
  assert.equal(await switcher.inputValue(), 'other');
  await switcher.selectOption('default');
  await page.waitForURL(server.url + '/');
  await page.getByRole('table', { name: 'Resources' }).waitFor();
  assert.equal(await page.locator('#ns-name').innerText(), 'default');
  assert.equal(await page.getByLabel('Namespace').inputValue(), 'default');
  assert.deepEqual(pageErrors, []);
  await context.close();
});

// The README's picture: what a demo shows once a client has made a few
// calls. UPDATE_DOCS_SCREENSHOT=1 writes it to docs/console.png.
test('a demo state for the README screenshot', async () => {
  assert.equal((await call('POST', '/__admin/reset')).status, 200);
  assert.equal((await call('POST', '/__admin/resources', demoResources())).status, 200);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(server.url + '/');
  await page.getByText('25 resources').first().waitFor();

  const created = await call('POST', '/api/v2/resource', { FirstName: 'Mary', Surname: 'Somerville', Company: 'Royal Society', Types: [{ Type: 'Customer' }] });
  assert.equal(created.status, 201);
  const id = created.body.Data[0].Id;
  assert.equal((await call('PUT', '/api/v2/resource/' + id, { Id: id, Surname: 'Fairfax' })).status, 400);
  assert.equal((await call('POST', '/__admin/faults', [
    { Method: 'POST', Path: '/api/v2/resource', Status: 503, Headers: { 'Retry-After': '1' }, Times: 1 },
    { Method: 'POST', Path: '/api/v2/resource', Kind: 'reset', Times: 1 },
    { Method: 'PUT', Path: '/api/v2/resource/{id}', Status: 503, After: true, Times: 2 },
  ])).status, 200);
  assert.equal((await client('POST', '/api/v2/resource', { Company: 'Retry Ltd' })).status, 503);
  assert.ok((await client('POST', '/api/v2/resource', { Company: 'Retry Ltd' })).error);
  assert.equal((await client('POST', '/api/v2/resource', { Company: 'Retry Ltd' })).status, 201);
  const q = "?requestParams.filters=" + encodeURIComponent("Company~contains~'bell'") + '&requestParams.sorts=Surname-asc';
  assert.equal((await fetch(server.url + '/api/v2/resource' + q)).status, 200);

  const requests = page.getByRole('list', { name: 'Requests' });
  await until(async () => (await requests.getByRole('listitem').count()) === 6, 'six client requests');
  await page.getByRole('list', { name: 'Faults in force' }).getByRole('listitem').filter({ hasText: '0 of 2 fired' }).waitFor({ timeout: WAIT_MS });
  await requests.getByRole('listitem').filter({ hasText: 'no answer (reset)' }).waitFor({ timeout: WAIT_MS });
  // The 503 opened: what the client got, Retry-After included.
  const faulted = requests.getByRole('listitem').filter({ hasText: 'fault' }).filter({ hasText: '503' });
  await faulted.locator('summary').click();
  await faulted.getByText('Retry-After: 1').waitFor();
  await page.evaluate(() => { window.scrollTo(0, 0); document.getElementById('toast').hidden = true; });
  const shot = await page.screenshot();
  fs.writeFileSync(path.join(shotDir, 'demo-1280x800.png'), shot);
  const small = toPalettePNG(shot);
  assert.ok(small.length < 150 * 1024, 'the README screenshot is ' + small.length + ' bytes');
  if (process.env.UPDATE_DOCS_SCREENSHOT) {
    fs.mkdirSync(path.join(repo, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'docs', 'console.png'), small);
  }
  await context.close();
});

test('served at /ns/{name}/, the console works on that namespace', async () => {
  const seeded = await call('POST', '/ns/demo/__admin/resources', [{ Company: 'Namespaced One' }, { Company: 'Namespaced Two' }]);
  assert.equal(seeded.status, 200);
  const context = await browser.newContext();
  const page = await context.newPage();
  const requested = [];
  page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  const res = await page.goto(server.url + '/ns/demo/');
  assert.equal(res.status(), 200);
  await until(async () => JSON.stringify(await displayNames(page)) === '["Namespaced One","Namespaced Two"]', 'the namespace\'s rows');
  assert.equal(await page.locator('#ns-name').innerText(), 'demo');
  assert.equal(await page.getByRole('link', { name: 'OpenAPI', exact: true }).getAttribute('href'), '/ns/demo/__admin/openapi.json');

  // A request to the namespace shows in its list; one to the default namespace does not.
  await fetch(server.url + '/api/v2/resource?where=default');
  await fetch(server.url + '/ns/demo/api/v2/resource?where=demo');
  const requests = page.getByRole('list', { name: 'Requests' });
  await requests.getByText('where=demo').waitFor({ timeout: WAIT_MS });
  assert.equal(await requests.getByText('where=default').count(), 0);
  // Every call the page made carries the prefix (the assets are shared).
  // Only the list of namespaces is server-wide.
  const stray = requested.filter((p) => !p.startsWith('/ns/demo/') && !p.startsWith('/__admin/console/') && p !== '/__admin/namespaces');
  assert.deepEqual(stray, []);
  await context.close();
});

test('with a journal that does not number its entries, the list is polled', async () => {
  // Each poll reads the whole journal, answers included: start it empty, so
  // that a poll takes what it takes on an older server, not the size of the
  // tests before.
  assert.equal((await call('DELETE', '/__admin/requests')).status, 200);
  const context = await browser.newContext();
  // An older server: no Seq, no Count or Journal, no since/count/wait.
  await context.route((url) => url.pathname === '/__admin/requests', async (route) => {
    const u = new URL(route.request().url());
    const response = await route.fetch({ url: server.url + u.pathname });
    const body = await response.json();
    const Requests = body.Requests.map(({ Seq, ...rest }) => rest);
    await route.fulfill({ response, json: { Requests } });
  });
  const page = await context.newPage();
  await page.goto(server.url + '/');
  await page.getByRole('table', { name: 'Resources' }).waitFor();
  // What is tested is that polling finds new entries once each, not how
  // fast: every poll goes through the route above, which a loaded machine
  // slows down, so the waits are generous rather than the contract's second.
  const marker = 'polled' + Date.now();
  await fetch(server.url + '/api/v2/resource?marker=' + marker);
  await page.getByRole('list', { name: 'Requests' }).getByText(marker).waitFor({ timeout: WAIT_MS });
  // Polling again does not repeat an entry.
  await fetch(server.url + '/api/v2/resource?marker=after');
  await page.getByRole('list', { name: 'Requests' }).getByText('marker=after').waitFor({ timeout: WAIT_MS });
  assert.equal(await page.getByRole('list', { name: 'Requests' }).getByText(marker).count(), 1);
  await context.unrouteAll({ behavior: 'ignoreErrors' });
  await context.close();
});

test('under -auth the page works through the Basic prompt and never shows the token', async () => {
  const token = 'sekret-token-1234';
  const authed = await start(['-auth', 'svc:' + token]);
  try {
    const anon = await fetch(authed.url + '/');
    assert.equal(anon.status, 401);
    assert.equal(anon.headers.get('www-authenticate'), 'Basic realm="resourcedir"');
    const context = await browser.newContext({ httpCredentials: { username: 'svc', password: token } });
    const page = await context.newPage();
    await page.goto(authed.url + '/');
    await page.getByRole('table', { name: 'Resources' }).waitFor();
    await page.getByText('0 resources').first().waitFor();
    // The console's own calls are not journaled; a client's is.
    const authorization = 'Basic ' + Buffer.from('svc:' + token).toString('base64');
    assert.equal((await fetch(authed.url + '/api/v2/resource?from=client', { headers: { Authorization: authorization } })).status, 200);
    await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').filter({ hasText: 'from=client' }).waitFor({ timeout: WAIT_MS });
    const item = page.getByRole('list', { name: 'Requests' }).getByRole('listitem').first();
    await item.locator('summary').click();
    await item.locator('.req-detail').waitFor();
    assert.match(await item.innerText(), /Authorization: Basic svc:\*\*\*/);
    assert.ok(!(await page.content()).includes(token));
    // A request refused for its credentials (here a token sent as the
    // user name, curl -u $TOKEN:) keeps its request line alone: the page
    // says so, and its curl command carries no credential.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: authed.url });
    const asUser = 'Basic ' + Buffer.from(token + ':').toString('base64');
    assert.equal((await fetch(authed.url + '/api/v2/resource?from=token-user', { headers: { Authorization: asUser } })).status, 401);
    const refused = page.getByRole('list', { name: 'Requests' }).getByRole('listitem').filter({ hasText: 'from=token-user' });
    await refused.waitFor({ timeout: WAIT_MS });
    await refused.locator('summary').click();
    await refused.locator('.req-detail').waitFor();
    assert.match(await refused.innerText(), /^\(not kept: the request was refused for its credentials\)$/m);
    await refused.getByRole('button', { name: 'Copy as curl' }).click();
    await page.getByText('Copied the curl command.').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(copied.startsWith("curl '" + authed.url + "/api/v2/resource?from=token-user'"), copied);
    assert.ok(!copied.includes('Authorization') && !copied.includes(token), copied);
    assert.ok(!(await page.content()).includes(token));
    await context.close();
  } finally {
    await authed.stop();
  }
});
