// HTTPS: connect() trusts RESOURCEDIR_CA_FILE (run under resourcedir -tls --),
// and start() with -tls trusts the CA it asked the server to write.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect, start } from "resourcedir";

test("connect() over https", async (t) => {
  assert.match(process.env.RESOURCEDIR_URL, /^https:\/\/127\.0\.0\.1:\d+$/);
  const dir = await connect("tls");
  t.after(() => dir.close());
  assert.ok(dir.url.startsWith(`${process.env.RESOURCEDIR_URL}/ns/tls-`), dir.url);
  const [id] = await dir.seed([{ FirstName: "Ada", Surname: "Lovelace" }]);
  assert.deepEqual((await dir.resources()).map((r) => r.Id), [id]);
});

test("start() with -tls", async () => {
  const server = await start({ args: ["-tls"] });
  try {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(readFileSync(server.caFile, "utf8"), /^-----BEGIN CERTIFICATE-----/);
    const dir = await server.namespace("tls");
    await dir.addFault({ Path: "*", Status: 418 });
    assert.equal((await dir.faults())[0].Status, 418);
    await dir.close();
  } finally {
    await server.close();
  }
});
