// Validates GET /__admin/openapi.json with a standard OpenAPI validator, then
// replays real requests against the real binary (every operation, every
// error status it can reach) and checks each answer against the document.
'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const SwaggerParser = require('@apidevtools/swagger-parser');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const { start } = require('./server');
const { demoResources } = require('./fixtures');

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');

const maxBody = 4096; // small, so that a 413 is cheap to provoke
const maxSeedBody = 65536;
let server;
let authed;
let snapDir;
let doc;
let ajv;

before(async () => {
  snapDir = fs.mkdtempSync(path.join(os.tmpdir(), 'resourcedir-openapi-'));
  server = await start(['-max-body', String(maxBody), '-max-seed-body', String(maxSeedBody), '-snapshot', path.join(snapDir, 'snap.gob')]);
  authed = await start(['-auth', 'svc:token']);
  const res = await fetch(server.url + '/__admin/openapi.json');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  doc = await res.json();
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
});

after(async () => {
  if (server) await server.stop();
  if (authed) await authed.stop();
  if (snapDir) fs.rmSync(snapDir, { recursive: true, force: true });
});

// rawSend is for what fetch will not send: a foreign Host header.
function rawSend(base, method, p, headers) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: p, headers }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the document is valid OpenAPI 3.1', async () => {
  assert.match(doc.openapi, /^3\.1\./);
  // validate() dereferences in place: give it a copy.
  await SwaggerParser.validate(structuredClone(doc));
});

const pointer = (...parts) => '#/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

// check validates one answer against the document: the status must be one
// the operation lists (an injected fault's comes under "default"), and the
// body must match that response's schema.
function check(method, template, status, body, { fault = false } = {}) {
  const op = doc.paths[template] && doc.paths[template][method.toLowerCase()];
  assert.ok(op, `${method} ${template} is not in the document`);
  let key = String(status);
  if (!op.responses[key]) {
    assert.ok(fault && op.responses.default, `${method} ${template} does not document ${status}`);
    key = 'default';
  }
  let at = ['paths', template, method.toLowerCase(), 'responses', key];
  let response = op.responses[key];
  if (response.$ref) {
    const name = response.$ref.split('/').pop();
    at = ['components', 'responses', name];
    response = doc.components.responses[name];
  }
  assert.ok(response.content && response.content['application/json'], `${method} ${template} ${key} has no JSON content`);
  const validate = ajv.getSchema('openapi.json' + pointer(...at, 'content', 'application/json', 'schema'));
  if (!validate(body)) {
    assert.fail(`${method} ${template} ${status}: the body does not match the document: ` +
      ajv.errorsText(validate.errors) + '\n' + JSON.stringify(body).slice(0, 600));
  }
}

// declared lists the headers the document declares for an answer.
function declared(method, template, status) {
  let r = doc.paths[template][method.toLowerCase()].responses[String(status)];
  if (r.$ref) r = doc.components.responses[r.$ref.split('/').pop()];
  return Object.keys(r.headers || {});
}

// send makes one request and checks its answer against the document.
async function send(base, method, path, template, { body, raw, headers = {}, status, fault } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] ??= 'application/json';
  } else if (raw !== undefined) {
    init.body = raw;
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8', `${method} ${path}: ${text.slice(0, 200)}`);
  assert.ok(res.headers.get('x-request-id'), `${method} ${path} has no X-Request-Id`);
  const parsed = JSON.parse(text);
  if (status !== undefined) assert.equal(res.status, status, `${method} ${path}: ${text.slice(0, 300)}`);
  check(method, template, res.status, parsed, { fault });
  return { status: res.status, body: parsed, headers: res.headers };
}

test('every answer of every operation matches the document', async (t) => {
  const s = server.url;
  const seed = demoResources();
  seed[0].Id = '0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c11';
  seed[1].Address = { Street: '1 Engine Row', City: 'London' };
  // Any GUID is accepted in a seed and written back canonical: the Id
  // pattern must admit them, whatever their version.
  const zeroish = ['00000000-0000-4000-8000-000000000001', '00000000-0000-0000-0000-000000000001'];
  seed[2].Id = zeroish[0];
  seed[3].Id = zeroish[1].toUpperCase();

  await t.test('admin controls', async () => {
    await send(s, 'GET', '/__admin/health', '/__admin/health', { status: 200 });
    await send(s, 'POST', '/__admin/resources', '/__admin/resources', { body: seed, status: 200 });
    await send(s, 'POST', '/__admin/resources', '/__admin/resources', { body: [{ DisplayName: 'x'.repeat(101) }, { Company: 'A', Types: [{ Type: 'Robot' }] }], status: 400 });
    await send(s, 'POST', '/__admin/resources', '/__admin/resources', { body: [{ Id: seed[0].Id, Company: 'Dup' }], status: 400 });
    await send(s, 'POST', '/__admin/resources', '/__admin/resources', { raw: '[{"Company": ', headers: { 'Content-Type': 'application/json' }, status: 400 });
    await send(s, 'GET', '/__admin/resources', '/__admin/resources', { status: 200 });
    await send(s, 'GET', '/__admin/openapi.json', '/__admin/openapi.json', { status: 200 });
    await send(s, 'GET', '/__admin/openapi.json?format=yaml', '/__admin/openapi.json', { status: 400 });
    await send(s, 'GET', '/__admin/openapi.json?scope=api', '/__admin/openapi.json', { status: 200 });
    await send(s, 'GET', '/__admin/openapi.json?scope=admin', '/__admin/openapi.json', { status: 400 });
    const version = await send(s, 'GET', '/api/v2/version', '/api/v2/version', { status: 200 });
    assert.deepEqual(version.body, { Major: 2026, Minor: 4, Build: 1, Revision: 1, MajorRevision: 0, MinorRevision: 1 });
    await send(s, 'GET', '/ns/t1/api/v2/version', '/ns/{namespace}/api/v2/version', { status: 200 });
    const page = await fetch(s + '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.ok(doc.paths['/'].get.responses['200'].content['text/html']);
    for (const file of doc.paths['/__admin/console/{file}'].parameters[0].schema.enum) {
      const asset = await fetch(s + '/__admin/console/' + file);
      assert.equal(asset.status, 200);
      const type = asset.headers.get('content-type').split(';')[0];
      assert.ok(doc.paths['/__admin/console/{file}'].get.responses['200'].content[type], file + ' is served as ' + type);
    }
    await send(s, 'GET', '/__admin/console/nope.js', '/__admin/console/{file}', { status: 404 });
    await send(s, 'GET', '/__admin/faults', '/__admin/faults', { status: 200 });
    await send(s, 'POST', '/__admin/faults', '/__admin/faults', { body: { Path: 'api/v2/resource', Status: 42 }, status: 400 });
    await send(s, 'POST', '/__admin/faults', '/__admin/faults', { body: { Path: '/__admin/reset', Status: 503 }, status: 400 });
    await send(s, 'POST', '/__admin/snapshot', '/__admin/snapshot', { status: 200 });
    await send(s, 'PUT', '/__admin/seed', '/__admin/seed', { body: [{ Company: 'Seeded Co' }], status: 200 });
    await send(s, 'GET', '/__admin/seed', '/__admin/seed', { status: 200 });
    await send(s, 'PUT', '/__admin/seed', '/__admin/seed', { body: [{ Company: 'A', Types: [{ Type: 'Robot' }] }], status: 400 });
    await send(s, 'PUT', '/__admin/seed', '/__admin/seed', { body: [], status: 200 });
    await send(s, 'GET', '/__admin/health?verbose=1', '/__admin/health', { status: 400 });
    await send(s, 'POST', '/__admin/resources', '/__admin/resources', { body: Array.from({ length: 400 }, () => ({ Company: 'x'.repeat(200) })), status: 413 });
    const foreignHost = await rawSend(s, 'GET', '/api/v2/resource', { Host: 'evil.example' });
    assert.equal(foreignHost.status, 403);
    check('GET', '/api/v2/resource', 403, foreignHost.body);
    const foreignOrigin = await rawSend(s, 'POST', '/__admin/reset', { Origin: 'http://evil.example' });
    assert.equal(foreignOrigin.status, 403);
    check('POST', '/__admin/reset', 403, foreignOrigin.body);
    await send(s, 'PATCH', '/__admin/faults', '/__admin/faults', { status: 405 }).catch(async (e) => {
      // 405 is documented on each operation of the path: check it against GET.
      if (!/is not in the document/.test(e.message)) throw e;
      const res = await fetch(s + '/__admin/faults', { method: 'PATCH' });
      assert.equal(res.status, 405);
      assert.match(res.headers.get('allow'), /GET/);
      check('GET', '/__admin/faults', 405, await res.json());
    });
  });

  await t.test('the resource API', async () => {
    const list = await send(s, 'GET', '/api/v2/resource', '/api/v2/resource', { status: 200 });
    assert.deepEqual(list.body.ResourceList.slice(2, 4).map((r) => r.Id), zeroish);
    const typed = list.body.ResourceList.find((r) => r.Types.length > 1);
    assert.deepEqual(typed.Types.map((rt) => [rt.Id, rt.Type, rt._links, rt._embedded]), [[16, 'Employee', [], null], [2, 'Team', [], null]]);
    assert.equal(list.body.TotalResults, seed.length);
    const q = new URLSearchParams({
      'requestParams.filters': "(Company~contains~'bell'~or~Email~endswith~'.org')~or~Status~eq~'Inactive'",
      'requestParams.sorts': 'Surname-desc~FirstName',
      'requestParams.page': '2',
      'requestParams.pageSize': '3',
    });
    await send(s, 'GET', '/api/v2/resource?' + q, '/api/v2/resource', { status: 200 });
    await send(s, 'GET', '/api/v2/resource?requestParams.page=99', '/api/v2/resource', { status: 200 });
    await send(s, 'GET', '/API/V2/Resource/?requestParams.pageSize=100000', '/api/v2/resource', { status: 200 });
    for (const bad of ["requestParams.filters=DisplayName~eq~'open", 'requestParams.filters=Nope~eq~1',
      'requestParams.page=0', 'requestParams.pageSize=x', 'requestParams.sorts=Nope-asc']) {
      const r = await send(s, 'GET', '/api/v2/resource?' + bad, '/api/v2/resource', { status: 400 });
      assert.ok(r.body.Message);
    }

    const created = await send(s, 'POST', '/api/v2/resource', '/api/v2/resource',
      { body: { FirstName: 'Ada', Surname: 'Lovelace', Types: [{ Type: 'employee' }, { Type: 'Team' }], Address: { City: 'London' } }, status: 201 });
    const id = created.body.Data[0].Id;
    assert.deepEqual(created.body.Data[0].Address, { City: 'London' });
    assert.deepEqual(created.body.Data[0].Types, [{ Id: 16, Type: 'Employee' }, { Id: 2, Type: 'Team' }]);
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { body: { Company: 'Null Co', Status: null, Types: null, Email: '' }, status: 201 });
    const invalid = await send(s, 'POST', '/api/v2/resource', '/api/v2/resource',
      { body: { DisplayName: 'x'.repeat(101), FirstName: 'y'.repeat(51), Status: 'Asleep', Types: [{ Type: 'Robot' }, {}] }, status: 400 });
    assert.ok(Object.keys(invalid.body.ModelState).length >= 4);
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { body: {}, status: 400 });
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { raw: '{"Company": "A",', headers: { 'Content-Type': 'application/json' }, status: 400 });
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { raw: '', headers: { 'Content-Type': 'application/json' }, status: 400 });
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { raw: '[1]', headers: { 'Content-Type': 'application/json' }, status: 400 });
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { body: { Company: 'x'.repeat(maxBody) }, status: 413 });
    await send(s, 'POST', '/api/v2/resource', '/api/v2/resource', { raw: 'Company=A', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, status: 415 });

    const full = {
      Id: id.toUpperCase(), DisplayName: null, FirstName: 'Ada', Surname: 'King', Company: null, Position: 'Countess', Phone: null,
      Mobile: null, Fax: null, Email: 'ada@example.org', AddressComment: null, ExternalID: 'X1', Status: 'inactive', Types: [{ Type: 'Customer' }],
    };
    const tmpl = '/api/v2/resource/{id}';
    const updated = await send(s, 'PUT', '/api/v2/resource/' + id, tmpl, { body: full, status: 200 });
    assert.equal(updated.body.DisplayName, 'Ada King');
    assert.deepEqual(updated.body.Types, [{ Id: 4, Type: 'Customer', _links: [], _embedded: null }]);
    assert.deepEqual(updated.body.Address, { City: 'London' });
    const row = await send(s, 'GET', `/api/v2/resource?requestParams.filters=Id~eq~'${id}'`, '/api/v2/resource', { status: 200 });
    assert.deepEqual(row.body.ResourceList, [updated.body]);
    const { Email, ...partial } = full;
    await send(s, 'PUT', '/api/v2/resource/' + id, tmpl, { body: partial, status: 400 });
    await send(s, 'PUT', '/api/v2/resource/' + id, tmpl, { body: { ...full, Status: null }, status: 400 });
    await send(s, 'PUT', '/api/v2/resource/' + id, tmpl, { body: { ...full, Id: '0b6f4ad2-5a57-4cc5-9a0f-7f3c1f7f0c11' }, status: 400 });
    await send(s, 'PUT', '/api/v2/resource/not-a-guid', tmpl, { body: full, status: 400 });
    const other = '5d1e1bb5-0c0e-4b4e-8a43-3c1f6f3e9a10';
    await send(s, 'PUT', '/api/v2/resource/' + other, tmpl, { body: { ...full, Id: other }, status: 404 });
    await send(s, 'PUT', '/api/v2/resource/' + id, tmpl, { body: { ...full, AddressComment: 'z'.repeat(maxBody) }, status: 413 });
    await send(s, 'PUT', '/api/v2/resource/' + id, tmpl, { raw: JSON.stringify(full), headers: { 'Content-Type': 'text/plain' }, status: 415 });
  });

  await t.test('the journal and faults', async () => {
    const all = await send(s, 'GET', '/__admin/requests', '/__admin/requests', { status: 200 });
    assert.ok(all.body.Requests.length > 10);
    await send(s, 'GET', '/__admin/requests?method=PUT&status=400', '/__admin/requests', { status: 200 });
    const last = all.body.Requests[all.body.Requests.length - 1];
    await send(s, 'GET', '/__admin/requests?path=/api/v2/resource/{id}&limit=2', '/__admin/requests', { status: 200 });
    if (typeof last.Seq === 'number') {
      const later = await send(s, 'GET', `/__admin/requests?since=${last.Seq - 1}&count=1&wait=1s`, '/__admin/requests', { status: 200 });
      assert.equal(later.body.Requests.length, 1);
    }
    await send(s, 'GET', '/__admin/requests?nope=1', '/__admin/requests', { status: 400 });
    const added = await send(s, 'POST', '/__admin/faults', '/__admin/faults',
      { body: [{ Method: 'GET', Path: '/api/v2/resource', Status: 503, Times: 1 }, { Path: '/api/v2/resource/{id}', Status: 429, Headers: { 'Retry-After': '7' }, Times: 1 }], status: 200 });
    assert.equal(added.body.Faults.length, 2);
    const listed = await send(s, 'GET', '/__admin/faults', '/__admin/faults', { status: 200 });
    const extra = await send(s, 'POST', '/__admin/faults', '/__admin/faults', { body: { Path: '/api/v2/resource', DelayMs: 1, Times: 1 }, status: 200 });
    await send(s, 'DELETE', '/__admin/faults/' + extra.body.Faults[0].Id, '/__admin/faults/{id}', { status: 200 });
    await send(s, 'DELETE', '/__admin/faults/' + extra.body.Faults[0].Id, '/__admin/faults/{id}', { status: 404 });
    assert.equal(listed.body.Faults.length, 2);
    await send(s, 'GET', '/api/v2/resource', '/api/v2/resource', { status: 503, fault: true });
    const limited = await send(s, 'PUT', '/api/v2/resource/' + seed[0].Id, '/api/v2/resource/{id}', { body: {}, status: 429, fault: true });
    assert.equal(limited.headers.get('retry-after'), '7');
    assert.ok(declared('PUT', '/api/v2/resource/{id}', 429).includes('Retry-After'), 'the 429 does not declare Retry-After');
    assert.ok(declared('GET', '/api/v2/resource', 503).includes('Retry-After'), 'the 503 does not declare Retry-After');
    await send(s, 'DELETE', '/__admin/faults', '/__admin/faults', { status: 200 });
    await send(s, 'DELETE', '/__admin/requests', '/__admin/requests', { status: 200 });
    await send(s, 'DELETE', '/__admin/resources', '/__admin/resources', { status: 200 });
    await send(s, 'POST', '/__admin/reset', '/__admin/reset', { status: 200 });
    const health = await send(s, 'GET', '/__admin/health', '/__admin/health', { status: 200 });
    assert.equal(health.body.Resources, 0);
  });

  await t.test('namespaces', async () => {
    // Through a /ns/{name} base URL the same operations answer; the document
    // names that base in its servers, and lists the paths under it too.
    await send(s, 'POST', '/ns/t1/api/v2/resource', '/api/v2/resource', { body: { Company: 'Spaced' }, status: 201 });
    await send(s, 'POST', '/ns/t1/api/v2/resource', '/ns/{namespace}/api/v2/resource', { body: { Company: 'Listed' }, status: 201 });
    const listed = await send(s, 'GET', '/__admin/namespaces', '/__admin/namespaces', { status: 200 });
    assert.deepEqual(listed.body.Namespaces.map((n) => n.Name), ['default', 't1']);
    await send(s, 'GET', '/ns/t1/__admin/requests', '/ns/{namespace}/__admin/requests', { status: 200 });
    await send(s, 'DELETE', '/__admin/namespaces/t1', '/__admin/namespaces/{name}', { status: 200 });
    await send(s, 'DELETE', '/__admin/namespaces/t1', '/__admin/namespaces/{name}', { status: 404 });
    await send(s, 'DELETE', '/__admin/namespaces/default', '/__admin/namespaces/{name}', { status: 400 });
    await send(s, 'GET', '/ns/bad!name/api/v2/resource', '/ns/{namespace}/api/v2/resource', { status: 400 });
    await send(s, 'GET', '/ns/bad!name/__admin/health', '/ns/{namespace}/__admin/health', { status: 400 });
    await send(s, 'GET', '/__admin/namespaces?x=1', '/__admin/namespaces', { status: 400 });
    const crowded = await start(['-max-namespaces', '1']);
    try {
      const r = await send(crowded.url, 'GET', '/ns/one-too-many/api/v2/resource', '/api/v2/resource', { status: 429 });
      assert.match(r.body.Message, /max-namespaces/);
    } finally {
      await crowded.stop();
    }
  });

  await t.test('HEAD wherever GET is served', async () => {
    for (const [template, item] of Object.entries(doc.paths)) {
      if (!item.get) continue;
      assert.ok(item.head, `${template} has GET but no HEAD`);
      // Every path parameter has an example (Dredd fills paths with them).
      const p = (item.parameters || []).reduce((p, param) => p.replace(`{${param.name}}`, param.example), template);
      assert.doesNotMatch(p, /[{}]/, `${template}: a path parameter without an example`);
      const get = await fetch(s + p);
      await get.arrayBuffer();
      const head = await fetch(s + p, { method: 'HEAD' });
      assert.equal(get.status, 200, 'GET ' + p);
      assert.equal(head.status, get.status, 'HEAD ' + p);
      assert.equal(await head.text(), '', 'HEAD ' + p + ' has a body');
      assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), 'HEAD ' + p);
      assert.ok(item.head.responses[String(head.status)], `HEAD ${template} does not document ${head.status}`);
      for (const r of Object.values(item.head.responses)) assert.equal(r.content, undefined, `HEAD ${template} documents a body`);
    }
  });

  await t.test('generated data, awkward cases included, in a fresh namespace', async () => {
    // The generator's data holds what breaks clients (names of exactly 50
    // and 100 characters, non-BMP text, null next to ""): every answer
    // carrying it must still match the document.
    const ns = await send(s, 'POST', '/__admin/namespaces', '/__admin/namespaces', { body: { Prefix: 'ci' }, status: 201 });
    const base = new URL(ns.body.BaseURL).pathname;
    const gen = await send(s, 'POST', base + '/__admin/generate', '/__admin/generate', { body: { Count: 400, Seed: 7 }, status: 200 });
    assert.equal(gen.body.Ids.length, 400);
    await send(s, 'POST', base + '/__admin/generate', '/__admin/generate', { body: { Count: 0 }, status: 400 });
    await send(s, 'POST', base + '/__admin/generate', '/__admin/generate', { body: { Count: 1, Sead: 7 }, status: 400 });
    const listed = [];
    for (let page = 1; page <= 4; page++) {
      const res = await send(s, 'GET', `${base}/api/v2/resource?requestParams.pageSize=100&requestParams.page=${page}`, '/api/v2/resource', { status: 200 });
      listed.push(...res.body.ResourceList);
    }
    assert.equal(listed.length, 400);
    assert.ok(listed.some((r) => [...r.DisplayName].length === 100), 'a DisplayName of 100 characters');
    assert.ok(listed.some((r) => /[\u{10000}-\u{10FFFF}]/u.test(JSON.stringify(r))), 'non-BMP text');
    // Each listed row, sent back as a full PUT, is accepted and answered
    // in the document's shape.
    for (const r of listed.slice(0, 40)) {
      const body = { ...r, Types: r.Types.map(({ Type }) => ({ Type })) };
      for (const k of ['StatusId', 'Address', '_links', '_embedded']) delete body[k];
      await send(s, 'PUT', `${base}/api/v2/resource/${r.Id}`, '/api/v2/resource/{id}', { body, status: 200 });
    }
    await send(s, 'GET', base + '/__admin/resources', '/__admin/resources', { status: 200 });
    await send(s, 'DELETE', '/__admin/namespaces/' + ns.body.Name, '/__admin/namespaces/{name}', { status: 200 });
  });

  await t.test('authentication', async () => {
    const a = authed.url;
    for (const [method, path, template] of [['GET', '/api/v2/resource', '/api/v2/resource'], ['POST', '/__admin/reset', '/__admin/reset'],
      ['GET', '/__admin/openapi.json', '/__admin/openapi.json']]) {
      const r = await send(a, method, path, template, { status: 401 });
      assert.equal(r.headers.get('www-authenticate'), 'Basic realm="resourcedir"');
    }
    const basic = 'Basic ' + Buffer.from('svc:token').toString('base64');
    await send(a, 'GET', '/api/v2/resource', '/api/v2/resource', { headers: { Authorization: basic }, status: 200 });
    await send(a, 'GET', '/__admin/health', '/__admin/health', { headers: { Authorization: basic }, status: 200 });
    const anonymous = await send(a, 'GET', '/__admin/health', '/__admin/health', { status: 200 });
    assert.deepEqual(anonymous.body, { Status: 'ok' });
  });
});
