// Drives the console in Debian's Chromium against the real binary, finding
// every control by its accessible name, as the contract names them.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { start, repo } = require('./server');
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

// rowTexts gives the DisplayName column of the rows shown.
async function displayNames(page) {
  return page.getByRole('table', { name: 'Resources' }).locator('tbody td.col-DisplayName').allTextContents();
}

// until polls fn until it returns a truthy value or the deadline passes.
async function until(fn, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('timed out after ' + ms + ' ms waiting for ' + what);
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
    await until(async () => (await displayNames(page)).length === 10, 5000, '10 rows');
    assert.deepEqual((await displayNames(page)).slice(0, 2), ['Ada Lovelace Analytical Engines', 'Charles Babbage Analytical Engines']);
    for (const name of ['DisplayName', 'FirstName', 'Surname', 'Company', 'Status', 'ExternalID', 'Email', 'Types']) {
      await table.getByRole('columnheader', { name }).waitFor();
    }
    await page.getByText('25 resources').first().waitFor();
  });

  await t.test('filters, and shows where a malformed filter broke', async () => {
    const filter = page.getByLabel('Filter');
    await filter.fill("Company~eq~'bell labs'");
    await filter.press('Enter');
    await until(async () => (await displayNames(page)).length === 3, 5000, 'three Bell Labs rows');
    assert.deepEqual(await displayNames(page), ['Dennis Ritchie Bell Labs', 'Ken Thompson Bell Labs', 'Claude Shannon Bell Labs']);

    const bad = "Company~eq~'Bell Labs'~and~Status~frob~'Active'";
    await filter.fill(bad);
    await filter.press('Enter');
    const error = page.locator('#filter-error');
    await until(async () => /at character \d+/.test(await error.innerText()), 5000, 'the filter error');
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
    await until(async () => (await page.locator('#filter-error').innerText()) === '', 5000, 'the error to clear');
    assert.equal(await filter.getAttribute('aria-invalid'), null);
    await until(async () => (await displayNames(page)).length === 10, 5000, 'the unfiltered page');
  });

  await t.test('sorts by a column header and pages', async () => {
    const table = page.getByRole('table', { name: 'Resources' });
    const header = table.getByRole('columnheader', { name: 'Surname' });
    await header.getByRole('button').click();
    await until(async () => (await header.getAttribute('aria-sort')) === 'ascending', 5000, 'ascending sort');
    // null Surnames sort first, then by lower-cased code point.
    await until(async () => (await displayNames(page))[0] === 'Analytical Engines', 5000, 'null surname first');
    assert.equal((await displayNames(page))[1], 'Frances Allen IBM Research');
    await header.getByRole('button').click();
    await until(async () => (await header.getAttribute('aria-sort')) === 'descending', 5000, 'descending sort');
    await until(async () => (await displayNames(page))[0] === 'Émile Zola', 5000, 'Zola first');

    const next = page.getByRole('button', { name: 'Next page' });
    const prev = page.getByRole('button', { name: 'Previous page' });
    assert.equal(await prev.isDisabled(), true);
    await next.click();
    await page.getByText('Page 2 of 3').waitFor();
    await next.click();
    await page.getByText('Page 3 of 3').waitFor();
    await until(async () => (await displayNames(page)).length === 5, 5000, 'the last 5 rows');
    assert.equal(await next.isDisabled(), true);
    await prev.click();
    await page.getByText('Page 2 of 3').waitFor();
    await header.getByRole('button').click(); // back to no sort
    await until(async () => (await header.getAttribute('aria-sort')) === null, 5000, 'no sort');
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
    await until(async () => (await call('GET', '/__admin/health')).body.Resources === 26, 5000, 'the create');
    await until(async () => (await err.count()) === 0 || (await err.innerText()) === '', 5000, 'the error to clear');

    const filter = page.getByLabel('Filter');
    await filter.fill("Surname~eq~'Somerville'");
    await filter.press('Enter');
    await until(async () => JSON.stringify(await displayNames(page)) === '["Mary Somerville"]', 5000, 'the new row');
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
    await page.getByRole('button', { name: 'Save' }).click();
    const row = page.getByRole('row', { name: /Mary Somerville/ });
    await until(async () => /Royal Society/.test(await row.innerText()), 5000, 'the saved row');
    assert.match(await row.innerText(), /Inactive/);
    const listed = (await call('GET', '/__admin/resources')).body;
    const all = Array.isArray(listed) ? listed : listed.Data;
    const mary = all.find((r) => r.Surname === 'Somerville');
    assert.equal(mary.Company, 'Royal Society');
    assert.equal(mary.Email, 'mary@example.org');
    assert.deepEqual(mary.Types, [{ Id: 4, Type: 'Customer' }]);
    // The journal shows the form's request was the full PUT.
    const journal = (await call('GET', '/__admin/requests')).body.Requests;
    const put = journal.filter((e) => e.Method === 'PUT').pop();
    assert.deepEqual(Object.keys(put.Body).sort(), ['AddressComment', 'Company', 'DisplayName', 'Email', 'ExternalID', 'Fax', 'FirstName',
      'Id', 'Mobile', 'Phone', 'Position', 'Status', 'Surname', 'Types']);
    const filter = page.getByLabel('Filter');
    await filter.fill('');
    await filter.press('Enter');
  });

  await t.test('shows a request sent by another client within a second', async () => {
    const requests = page.getByRole('list', { name: 'Requests' });
    await requests.waitFor();
    const marker = 'probe' + Date.now();
    const sent = Date.now();
    const res = await fetch(server.url + "/api/v2/resource?requestParams.filters=" + encodeURIComponent("ExternalID~eq~'" + marker + "'"));
    assert.equal(res.status, 200);
    await requests.getByText(marker).first().waitFor({ timeout: Math.max(1, 1000 - (Date.now() - sent)) });
    const item = requests.getByRole('listitem').filter({ hasText: marker }).first();
    assert.match(await item.innerText(), /GET/);
    assert.match(await item.innerText(), /200/);
    assert.match(await item.innerText(), /ms/);

    // A body on demand.
    const post = await call('POST', '/api/v2/resource', { Company: 'Body Shop ' + marker });
    assert.equal(post.status, 200);
    const postItem = requests.getByRole('listitem').filter({ hasText: 'POST' }).filter({ hasNotText: 'console' }).first();
    await postItem.waitFor({ timeout: 1000 });
    await postItem.getByText('body', { exact: true }).click();
    await postItem.getByText('Body Shop ' + marker).waitFor();
  });

  await t.test('adds a fault, shows it, clears it', async () => {
    const faults = page.getByRole('list', { name: 'Faults in force' });
    await page.getByLabel('Method').selectOption('GET');
    await page.getByLabel('Path').fill('/api/v2/resource');
    await page.getByLabel('Status').fill('503');
    await page.getByLabel('Times').fill('2');
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
    await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').filter({ hasText: 'faulted=1' }).filter({ hasText: '503' }).first().waitFor({ timeout: 1000 });

    // The view a demo opens on: the top of the page, no passing toast.
    await page.evaluate(() => { window.scrollTo(0, 0); document.getElementById('toast').hidden = true; });
    await page.locator('.table-wrap').evaluate((e) => { e.scrollLeft = 0; });
    await page.screenshot({ path: path.join(shotDir, 'console-1280x800.png') });

    await page.getByRole('button', { name: 'Clear faults' }).click();
    await until(async () => (await faults.getByRole('listitem').count()) === 0, 5000, 'no faults');
    assert.deepEqual((await call('GET', '/__admin/faults')).body.Faults, []);
  });

  await t.test('fits a narrow window', async () => {
    await page.setViewportSize({ width: 400, height: 860 });
    await page.getByRole('table', { name: 'Resources' }).waitFor();
    // Nothing but the table's own scroller may be wider than the window.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(overflow <= 400, 'page is ' + overflow + 'px wide');
    for (const name of ['Create', 'Reset', 'Next page', 'Previous page']) {
      const box = await page.getByRole('button', { name }).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 400, name + ' is off screen: ' + JSON.stringify(box));
    }
    await page.screenshot({ path: path.join(shotDir, 'console-400-top.png') });
    await page.screenshot({ path: path.join(shotDir, 'console-400-full.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await t.test('resets', async () => {
    await page.getByRole('button', { name: 'Reset' }).click();
    await until(async () => (await displayNames(page)).length === 0, 5000, 'an empty table');
    await page.getByText('0 resources').first().waitFor();
    assert.equal((await call('GET', '/__admin/health')).body.Resources, 0);
    assert.equal(await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').filter({ hasNotText: 'console' }).count(), 0);

    // An empty directory offers sample data, so that a demo has something to show.
    await page.getByRole('button', { name: 'Add sample data' }).click();
    await until(async () => (await displayNames(page)).length === 10, 5000, 'the sample rows');
    assert.equal((await call('GET', '/__admin/health')).body.Resources, 13);
    assert.equal(await page.getByRole('button', { name: 'Add sample data' }).isVisible(), false);

    // A test that empties the directory through the admin API (which the
    // journal does not record) is followed without a reload.
    assert.equal((await call('DELETE', '/__admin/resources')).status, 200);
    await until(async () => (await displayNames(page)).length === 0, 8000, 'the table to follow the deletion');
  });

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
  await page.getByLabel("Show the console's own calls").uncheck();

  const created = await call('POST', '/api/v2/resource', { FirstName: 'Mary', Surname: 'Somerville', Company: 'Royal Society', Types: [{ Type: 'Customer' }] });
  assert.equal(created.status, 200);
  const id = created.body.Data[0].Id;
  assert.equal((await call('PUT', '/api/v2/resource/' + id, { Id: id, Surname: 'Fairfax' })).status, 400);
  assert.equal((await call('POST', '/__admin/faults', { Method: 'POST', Path: '/api/v2/resource', Status: 503, Times: 3 })).status, 200);
  assert.equal((await call('POST', '/api/v2/resource', { Company: 'Retry Ltd' })).status, 503);
  const q = "?requestParams.filters=" + encodeURIComponent("Company~contains~'bell'") + '&requestParams.sorts=Surname-asc';
  assert.equal((await fetch(server.url + '/api/v2/resource' + q)).status, 200);

  const requests = page.getByRole('list', { name: 'Requests' });
  await until(async () => (await requests.getByRole('listitem').count()) === 4, 5000, 'four client requests');
  await page.getByRole('list', { name: 'Faults in force' }).getByRole('listitem').filter({ hasText: '1 of 3 fired' }).waitFor({ timeout: 5000 });
  await until(async () => (await requests.getByRole('listitem').count()) === 4, 5000, 'four client requests');
  await requests.getByRole('listitem').filter({ hasText: 'PUT' }).getByText('body', { exact: true }).click();
  await page.evaluate(() => { document.getElementById('toast').hidden = true; });
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
  await until(async () => JSON.stringify(await displayNames(page)) === '["Namespaced One","Namespaced Two"]', 5000, 'the namespace\'s rows');
  assert.equal(await page.locator('#ns-name').innerText(), 'demo');
  assert.equal(await page.getByRole('link', { name: 'OpenAPI', exact: true }).getAttribute('href'), '/ns/demo/__admin/openapi.json');

  // A request to the namespace shows in its list; one to the default namespace does not.
  await fetch(server.url + '/api/v2/resource?where=default');
  await fetch(server.url + '/ns/demo/api/v2/resource?where=demo');
  const requests = page.getByRole('list', { name: 'Requests' });
  await requests.getByText('where=demo').waitFor({ timeout: 1000 });
  assert.equal(await requests.getByText('where=default').count(), 0);
  // Every call the page made carries the prefix (the assets are shared).
  const stray = requested.filter((p) => !p.startsWith('/ns/demo/') && !p.startsWith('/__admin/console/'));
  assert.deepEqual(stray, []);
  await context.close();
});

test('with a journal that does not number its entries, the list is polled', async () => {
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
  const marker = 'polled' + Date.now();
  const sent = Date.now();
  await fetch(server.url + '/api/v2/resource?marker=' + marker);
  await page.getByRole('list', { name: 'Requests' }).getByText(marker).waitFor({ timeout: Math.max(1, 1000 - (Date.now() - sent)) });
  // Polling again does not repeat an entry.
  await fetch(server.url + '/api/v2/resource?marker=after');
  await page.getByRole('list', { name: 'Requests' }).getByText('marker=after').waitFor({ timeout: 1000 });
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
    await page.getByRole('list', { name: 'Requests' }).getByRole('listitem').first().waitFor();
    assert.ok(!(await page.content()).includes(token));
    await context.close();
  } finally {
    await authed.stop();
  }
});
