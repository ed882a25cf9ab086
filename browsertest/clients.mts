// Does against a running resourcedir what a team's TypeScript client does,
// through types openapi-typescript generated from the served OpenAPI
// document (schema.d.ts) and openapi-fetch, and exits non-zero at the first
// answer that is not the one expected. .ci/clients generates the types,
// compiles this with tsc --strict and runs it: node clients.mjs BASE-URL.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

// Only what is used of Node's globals: @types/node is not a dependency.
declare const process: { argv: string[]; exit(code: number): never };

type Resource = components["schemas"]["Resource"];
type RequestorTypeInput = components["schemas"]["RequestorTypeInput"];
type UpdateRequest = components["schemas"]["UpdateRequest"];

const base = process.argv[2];
if (!base) fail("usage: node clients.mjs BASE-URL");
const client = createClient<paths>({ baseUrl: base });

// Ids the seed gives: any GUID is accepted, version 4 or not.
const hopperId = "00000000-0000-4000-8000-000000000001";
const zeroId = "00000000-0000-0000-0000-000000000001";

function fail(message: string): never {
  console.error("ts client: " + message);
  process.exit(1);
}

function same(got: unknown, want: unknown, what: string): void {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) fail(`${what} = ${g}, want ${w}`);
}

// list asks for one page; the rows must be Resources as the schema names
// them, which is what the assignment checks at compile time.
async function list(query: paths["/api/v2/resource"]["get"]["parameters"]["query"]) {
  const { data, response } = await client.GET("/api/v2/resource", { params: { query } });
  if (!data) fail(`list: ${response.status}`);
  const rows: Resource[] = data.ResourceList;
  return { ...data, rows };
}

async function seed(): Promise<number> {
  const items: components["schemas"]["SeedResource"][] = [
    { Id: hopperId, FirstName: "Grace", Surname: "Hopper", Company: "Eckert-Mauchly", ExternalID: "GH-1", Types: [{ Type: "Employee" }], Address: { City: "Arlington" } },
    { Id: zeroId, Company: "Zero Version Ltd", ExternalID: "ZERO-1" },
  ];
  for (let i = 1; i <= 40; i++) {
    items.push({ FirstName: `First${String(i).padStart(2, "0")}`, Surname: "Seeded", ExternalID: `SEED-${String(i).padStart(2, "0")}`, Status: "Active" });
  }
  const { data, response } = await client.POST("/__admin/resources", { body: items });
  if (!data) fail(`seed: ${response.status}`);
  same(data.Total, items.length, "seed Total");
  same(data.Ids.slice(0, 2), [hopperId, zeroId], "seed Ids");
  const head = await client.HEAD("/__admin/health");
  same([head.response.status, await head.response.text()], [200, ""], "HEAD /__admin/health");
  return items.length;
}

// ensure makes sure the resource with ExternalID EXT-TEAM-7 exists: list
// with a filter, create when absent. It returns the resource's Id.
async function ensure(wantCreate: boolean): Promise<string> {
  const page = await list({ "requestParams.filters": "ExternalID~eq~'EXT-TEAM-7'" });
  if (page.TotalResults === 1 && !wantCreate) return page.rows[0].Id;
  if (page.TotalResults !== 0 || !wantCreate) fail(`ensure: the filter found ${page.TotalResults} (want create: ${wantCreate})`);
  const { data, error, response } = await client.POST("/api/v2/resource", {
    body: {
      FirstName: "Ada", Surname: "Lovelace", Company: "Analytical Engines", ExternalID: "EXT-TEAM-7",
      Types: [{ Type: "Employee" }, { Type: "Team" }], Address: { City: "London", Lines: ["12 St James's Square"] },
    },
  });
  if (!data) fail(`create: ${response.status} ${JSON.stringify(error)}`);
  const r = data.Data[0];
  same([data.Total, r.DisplayName, r.Status, r.StatusId], [1, "Ada Lovelace Analytical Engines", "Active", 1], "created");
  same(r.Types, [{ Id: 16, Type: "Employee" }, { Id: 2, Type: "Team" }], "created Types");
  same(r.Address, { City: "London", Lines: ["12 St James's Square"] }, "created Address");
  return r.Id;
}

// updateHopper finds a resource by FirstName and Surname and replaces it,
// Inactive, with every property: the row read is sent back with changes.
async function updateHopper(): Promise<void> {
  const page = await list({ "requestParams.filters": "FirstName~eq~'grace'~and~Surname~eq~'Hopper'" });
  if (page.TotalResults !== 1) fail(`find by name: ${page.TotalResults} found`);
  const row = page.rows[0];
  same([row.Id, row.Address, row._links, row._embedded], [hopperId, { City: "Arlington" }, [], null], "found");
  same(row.Types, [{ Id: 16, Type: "Employee", _links: [], _embedded: null }], "found Types");
  const types: RequestorTypeInput[] = [{ Type: "Contractor" }, { Type: "Team" }];
  const body: UpdateRequest = {
    ...row, DisplayName: "Rear Admiral Grace Hopper", Company: "US Navy", Position: "Rear Admiral", Phone: "+1 555 0100",
    Email: "grace@example.org", AddressComment: "Pentagon", Status: "Inactive", Types: types,
  };
  const { data, error, response } = await client.PUT("/api/v2/resource/{id}", { params: { path: { id: row.Id } }, body });
  if (!data) fail(`update: ${response.status} ${JSON.stringify(error)}`);
  const updated: Resource = data;
  same([updated.Id, updated.DisplayName, updated.Status, updated.StatusId, updated.Mobile, updated.Email, updated.Address],
    [hopperId, "Rear Admiral Grace Hopper", "Inactive", 2, null, "grace@example.org", { City: "Arlington" }], "updated");
  same(updated.Types, [{ Id: 8, Type: "Contractor", _links: [], _embedded: null }, { Id: 2, Type: "Team", _links: [], _embedded: null }], "updated Types");
  const inactive = await list({ "requestParams.filters": "Status~eq~'Inactive'" });
  same(inactive.rows.map((r) => r.Id), [hopperId], "Inactive resources");
}

// pageThrough reads every resource page by page, as an export does.
async function pageThrough(want: number): Promise<void> {
  const size = 7;
  const seen = new Set<string>();
  for (let p = 1; ; p++) {
    const page = await list({ "requestParams.page": p, "requestParams.pageSize": size, "requestParams.sorts": "ExternalID-asc~Id" });
    same([page.Page, page.TotalResults, page.TotalPages], [p, want, Math.ceil(want / size)], `page ${p}`);
    if (p > page.TotalPages) {
      same(page.rows.length, 0, `page ${p} past the last`);
      break;
    }
    same(page.rows.length, Math.min(size, want - (p - 1) * size), `page ${p} length`);
    for (const r of page.rows) {
      if (seen.has(r.Id)) fail(`page ${p} repeats ${r.Id}`);
      seen.add(r.Id);
    }
  }
  same([seen.size, seen.has(zeroId), seen.has(hopperId)], [want, true, true], "resources paged through");
}

// modelState reads the per-property errors of a 400.
async function modelState(): Promise<void> {
  const { data, error, response } = await client.POST("/api/v2/resource", { body: { DisplayName: "x".repeat(101), Company: "Long Names Ltd" } });
  if (data || !error) fail(`a 101-character DisplayName was accepted: ${response.status}`);
  same(response.status, 400, "status");
  same(error.ModelState, { DisplayName: ["DisplayName is 101 characters long; the limit is 100."] }, "ModelState");
}

const seeded = await seed();
const id = await ensure(true);
same(await ensure(false), id, "ensure the second time");
await updateHopper();
await pageThrough(seeded + 1);
await modelState();
console.log("ts client: ok");
