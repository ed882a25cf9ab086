// A browser app on another origin, as -cors admits it: in Debian's
// Chromium, a page reads a fault's Retry-After and retries, and a page of
// an origin -cors does not name gets nothing.
'use strict';
const { test, before, after } = require('node:test');
const http = require('node:http');
const assert = require('node:assert/strict');
const { chromium } = require('playwright-core');
const { start } = require('./server');

const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

// The app under test: a page whose client retries a create after a 503,
// waiting what Retry-After says (scaled down, so that the test is quick).
const appPage = `<!doctype html><meta charset="utf-8"><title>app</title><script>
async function createWithRetry(api) {
  const seen = [];
  for (let attempt = 1; ; attempt++) {
    const r = await fetch(api + '/api/v2/resource', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ FirstName: 'Grace', Surname: 'Hopper' }) });
    seen.push({ status: r.status, retryAfter: r.headers.get('Retry-After'), why: r.headers.get('X-Why'), id: r.headers.get('X-Request-Id') });
    if (r.status !== 503 || attempt === 3) return seen;
    await new Promise((ok) => setTimeout(ok, Number(r.headers.get('Retry-After')) * 10));
  }
}
</script>`;

let appServer;
let browser;

// serveApp serves the app's page on a free port: an origin of its own.
function serveApp() {
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(appPage);
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

before(async () => {
  appServer = await serveApp();
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
});

after(async () => {
  if (browser) await browser.close();
  if (appServer) appServer.close();
});

test('a page of a -cors origin reads a fault\'s Retry-After and retries', async () => {
  const appOrigin = 'http://127.0.0.1:' + appServer.address().port;
  const rd = await start(['-cors', 'http://localhost:5173,' + appOrigin]);
  try {
    const fault = { Method: 'POST', Path: '/api/v2/resource', Status: 503, Times: 1, Headers: { 'Retry-After': '2', 'X-Why': 'maintenance' } };
    assert.equal((await fetch(rd.url + '/__admin/faults', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fault) })).status, 200);
    const page = await browser.newPage();
    await page.goto(appOrigin + '/');
    const seen = await page.evaluate((api) => window.createWithRetry(api), rd.url);
    assert.equal(seen.length, 2, JSON.stringify(seen));
    assert.deepEqual([seen[0].status, seen[0].retryAfter, seen[0].why], [503, '2', 'maintenance']);
    assert.equal(seen[1].status, 201);
    assert.ok(seen[0].id && seen[1].id, 'X-Request-Id is readable');
    const journal = await (await fetch(rd.url + '/__admin/requests')).json();
    assert.deepEqual(journal.Requests.map((r) => [r.Method, r.Delivered, r.Headers.Origin]), [['POST', 503, appOrigin], ['POST', 201, appOrigin]]);
    await page.close();
  } finally {
    await rd.stop();
  }
});

test('a page of an origin -cors does not name is refused, and told the flag', async () => {
  const appOrigin = 'http://127.0.0.1:' + appServer.address().port;
  const rd = await start(['-cors', 'http://localhost:5173']);
  try {
    const page = await browser.newPage();
    await page.goto(appOrigin + '/');
    const failed = await page.evaluate((api) => window.createWithRetry(api).then(() => 'answered', (e) => e.name), rd.url);
    assert.equal(failed, 'TypeError'); // the browser hides the answer from the page
    // What the browser was told, as a client outside it sees it.
    const res = await fetch(rd.url + '/api/v2/resource', { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: appOrigin }, body: '{"Company": "A"}' });
    assert.equal(res.status, 403);
    assert.match((await res.json()).Message, new RegExp('Start it with -cors http://localhost:5173,' + appOrigin.replace(/[.]/g, '\\.') + ' to admit'));
    const health = await (await fetch(rd.url + '/__admin/health')).json();
    assert.equal(health.Resources, 0);
    await page.close();
  } finally {
    await rd.stop();
  }
});
