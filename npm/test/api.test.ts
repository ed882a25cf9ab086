// The API as a TypeScript suite uses it: compiled with tsc --strict against
// the installed package's declarations and run with node --test (.ci/node).
// Each test has a namespace of its own on one server that start() runs.
import { after, before, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import {
  start,
  ResourcedirError,
  type ApiError,
  type CreateResponse,
  type Directory,
  type FaultSpec,
  type JournalEntry,
  type Resource,
  type ResourcePage,
  type Server,
  type UpdateRequest,
} from "resourcedir";

const json = { "Content-Type": "application/json" };
const adaId = "6f9619ff-8b86-4011-b42d-00c04fc964ff";

let server: Server;
before(async () => {
  server = await start({
    seed: [{ Id: adaId, FirstName: "Ada", Surname: "Lovelace", Email: "ada@example.com", Types: [{ Type: "Employee" }] }],
  });
});
after(() => server.close());

async function directory(t: TestContext): Promise<Directory> {
  const dir = await server.namespace(t.name);
  t.after(() => dir.close());
  return dir;
}

function create(dir: Directory, body: object): Promise<Response> {
  return fetch(`${dir.url}/api/v2/resource`, { method: "POST", headers: json, body: JSON.stringify(body) });
}

async function list(dir: Directory, filter: string): Promise<ResourcePage> {
  const res = await fetch(`${dir.url}/api/v2/resource?requestParams.filters=${encodeURIComponent(filter)}`);
  assert.equal(res.status, 200);
  return (await res.json()) as ResourcePage;
}

test("a create, then a filtered list finds it", async (t) => {
  const dir = await directory(t);
  assert.match(dir.name, /^a-create--then-a-filtered-list-finds-it-[0-9a-f]{16}$/);
  assert.equal(dir.url, `${server.url}/ns/${dir.name}`);
  const res = await create(dir, { FirstName: "Grace", Surname: "Hopper", Company: "Navy", Types: [{ Type: "contractor" }] });
  assert.ok(res.ok, `create: ${res.status}`);
  const created = (await res.json()) as CreateResponse;
  assert.equal(created.Total, 1);
  const grace = created.Data[0];
  assert.match(grace.Id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(grace.DisplayName, "Grace Hopper Navy");
  assert.deepEqual(grace.Types, [{ Id: 8, Type: "Contractor" }]);

  const page = await list(dir, "DisplayName~eq~'Grace Hopper Navy'");
  assert.equal(page.TotalResults, 1);
  assert.equal(page.TotalPages, 1);
  assert.deepEqual(page.ResourceList.map((r) => r.Id), [grace.Id]);
  assert.deepEqual(page.ResourceList[0]._links, []);
  assert.equal(page.ResourceList[0]._embedded, null);
  assert.equal((await list(dir, "DisplayName~eq~'Grace'")).TotalResults, 0);
  // The seed and the create, in creation order; another namespace has only the seed.
  assert.deepEqual((await dir.resources()).map((r) => r.Id), [adaId, grace.Id]);
  const other = await directory(t);
  assert.deepEqual((await other.resources()).map((r) => r.DisplayName), ["Ada Lovelace"]);
});

test("a PUT with every editable key replaces the resource", async (t) => {
  const dir = await directory(t);
  const update: UpdateRequest = {
    Id: adaId,
    DisplayName: "Countess of Lovelace",
    FirstName: "Augusta Ada",
    Surname: "King",
    Company: "Analytical Engines",
    Position: "Analyst",
    Phone: "+44 20 7946 0000",
    Mobile: null,
    Fax: "",
    Email: "ada.king@example.com",
    AddressComment: "St James's Square",
    ExternalID: "AK-1815",
    Status: "Inactive",
    Types: [{ Type: "Employee" }, { Type: "Team" }],
  };
  const put = (body: object) =>
    fetch(`${dir.url}/api/v2/resource/${adaId}`, { method: "PUT", headers: json, body: JSON.stringify(body) });
  const res = await put(update);
  assert.equal(res.status, 200);
  const updated = (await res.json()) as Resource;
  const expected: Resource = {
    ...update,
    DisplayName: "Countess of Lovelace",
    Status: "Inactive",
    StatusId: 2,
    ContractorOrganization: null, // a PUT without it sets it to null
    Types: [
      { Id: 16, Type: "Employee", _links: [], _embedded: null },
      { Id: 2, Type: "Team", _links: [], _embedded: null },
    ],
    Address: null,
    _links: [],
    _embedded: null,
  };
  assert.deepEqual(updated, expected);
  assert.equal((await list(dir, "ExternalID~eq~'AK-1815'")).ResourceList[0].Email, "ada.king@example.com");
  const [stored] = await dir.resources();
  assert.equal(stored.StatusId, 2);
  assert.deepEqual(stored.Types, [{ Id: 16, Type: "Employee" }, { Id: 2, Type: "Team" }]);

  // A key left out is a 400 naming it: partial updates are not supported.
  const { Position, ...partial } = update;
  const refused = await put(partial);
  assert.equal(refused.status, 400);
  assert.match(((await refused.json()) as ApiError).Message, /Position/);

  // reset() brings the seed back.
  await dir.reset();
  assert.equal((await dir.resources())[0].DisplayName, "Ada Lovelace");
});

test("a fault answers 503 once, then lets the retry through", async (t) => {
  const dir = await directory(t);
  const fault: FaultSpec = { Method: "POST", Path: "/api/v2/resource", Status: 503, Times: 1 };
  const id = await dir.addFault(fault);
  const [listed] = await dir.faults();
  assert.equal(listed.Id, id);
  assert.equal(listed.Status, 503);
  assert.equal(listed.Times, 1);
  assert.equal(listed.Fired, 0);

  const first = await create(dir, { Company: "Retry Ltd" });
  assert.equal(first.status, 503);
  assert.equal(typeof ((await first.json()) as ApiError).Message, "string");
  const retry = await create(dir, { Company: "Retry Ltd" });
  assert.ok(retry.ok, `retry: ${retry.status}`);
  await retry.arrayBuffer();
  assert.equal((await dir.faults())[0].Fired, 1);
  assert.deepEqual((await dir.resources()).map((r) => r.DisplayName), ["Ada Lovelace", "Retry Ltd"]);

  // A listed fault can be added again; removeFault and clearFaults take them away.
  const again = await dir.addFault(listed);
  assert.notEqual(again, id);
  await dir.removeFault(id);
  assert.deepEqual((await dir.faults()).map((f) => f.Id), [again]);
  await dir.clearFaults();
  assert.deepEqual(await dir.faults(), []);
  await assert.rejects(dir.removeFault(id), (err: unknown) => err instanceof ResourcedirError && err.status === 404);
});

test("the journal: what was sent, what the server did, what the client got", async (t) => {
  const dir = await directory(t);
  const faultId = await dir.addFault({ Method: "GET", Path: "/api/v2/resource", Kind: "reset", Times: 1 });
  await assert.rejects(fetch(`${dir.url}/api/v2/resource`));
  const created = await create(dir, { FirstName: "Alan", Surname: "Turing" });
  assert.ok(created.ok, `create: ${created.status}`);
  await created.arrayBuffer();
  const page = await list(dir, "Surname~eq~'Turing'");
  assert.equal(page.TotalResults, 1);

  // A reset: the server did nothing (0) and the client got no answer (0).
  const all: JournalEntry[] = await dir.requests();
  assert.deepEqual(
    all.map((r) => [r.Method, r.Path, r.Status, r.Delivered, r.Fault]),
    [
      ["GET", "/api/v2/resource", 0, 0, faultId],
      ["POST", "/api/v2/resource", created.status, created.status, null],
      ["GET", "/api/v2/resource", 200, 200, null],
    ],
  );
  const [, posted, listed] = all;
  assert.deepEqual(posted.Body, { FirstName: "Alan", Surname: "Turing" });
  assert.equal(posted.Headers["Content-Type"], "application/json");
  assert.deepEqual(listed.Params, { "requestParams.filters": "Surname~eq~'Turing'" });
  assert.equal(listed.Status, 200);
  assert.equal((listed.Response?.Body as ResourcePage).TotalResults, 1);
  assert.ok(posted.Seq < listed.Seq);

  assert.deepEqual((await dir.requests({ method: "POST" })).map((r) => r.Seq), [posted.Seq]);
  assert.deepEqual((await dir.requests({ status: 200, method: "GET" })).map((r) => r.Seq), [listed.Seq]);
  assert.deepEqual((await dir.requests({ since: posted.Seq })).map((r) => r.Seq), [listed.Seq]);
  assert.deepEqual((await dir.requests({ limit: 1 })).map((r) => r.Seq), [listed.Seq]);

  // A request sent while the wait is on: the wait answers when it lands.
  const late = list(dir, "Surname~eq~'Later'");
  const waited = await dir.waitRequests(1, { since: listed.Seq, timeout: 5000 });
  assert.equal(waited[0].Params["requestParams.filters"], "Surname~eq~'Later'");
  await late;
  await assert.rejects(dir.waitRequests(1, { method: "DELETE", timeout: 100 }), /waited 100 ms for 1 requests/);

  await dir.clearRequests();
  assert.deepEqual(await dir.requests(), []);
  await dir.clearResources();
  const ids = await dir.generate(3, 7);
  const generated = await dir.resources();
  assert.deepEqual(generated.map((r) => r.Id), ids);
  const other = await directory(t);
  await other.clearResources();
  await other.generate(3, 7);
  const names = (list: { DisplayName: string }[]) => list.map((r) => r.DisplayName);
  assert.deepEqual(names(await other.resources()), names(generated), "the same randSeed, the same resources");
  await dir.clearResources();
  assert.deepEqual(await dir.seed([{ Company: "Seeded" }]).then((s) => s.length), 1);
  assert.deepEqual((await dir.resources()).map((r) => r.DisplayName), ["Seeded"]);
});
