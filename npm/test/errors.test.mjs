// What a user sees when something is wrong: each error says what and where.
// Run by .ci/node under `resourcedir -- node --test` (RESOURCEDIR_URL set).
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect, start, ResourcedirError } from "resourcedir";

test("connect() without RESOURCEDIR_URL names the command to run", async (t) => {
  const saved = process.env.RESOURCEDIR_URL;
  t.after(() => {
    process.env.RESOURCEDIR_URL = saved;
  });
  for (const value of [undefined, ""]) {
    if (value === undefined) delete process.env.RESOURCEDIR_URL;
    else process.env.RESOURCEDIR_URL = value;
    await assert.rejects(connect(), {
      message:
        "resourcedir: RESOURCEDIR_URL is not set: run the tests under a server, as in resourcedir -- node --test (or use start() for one of this process's own)",
    });
  }
});

test("a control the server refuses carries its status and Message", async (t) => {
  const dir = await connect("errors");
  t.after(() => dir.close());
  assert.match(dir.name, /^errors-[0-9a-f]{16}$/);
  const err = await dir.addFault({ Path: "/api/v1/nothing", Status: 503 }).catch((e) => e);
  assert.ok(err instanceof ResourcedirError, String(err));
  assert.equal(err.status, 400);
  assert.equal(typeof err.body.Message, "string");
  assert.ok(err.message.startsWith(`resourcedir: POST ${dir.url}/__admin/faults: 400 ${err.body.Message} Path: `), err.message);
  // The admin API is strict: a mistyped filter name is a 400 naming it.
  await assert.rejects(dir.requests({ methd: "GET" }), (e) => e instanceof ResourcedirError && e.status === 400 && /methd/.test(e.message));
  // The problems of each property, not only the Message.
  await assert.rejects(dir.seed([{ FirstName: "Ada", Surnam: "Lovelace" }]), (e) => {
    assert.equal(e.status, 400);
    assert.match(e.message, /: 400 The seed is invalid; nothing was seeded\. \[0\]\.Surnam: Surnam is not a resource property; did you mean Surname\?$/);
    return true;
  });
});

test("start() with a seed file that is not there says so", async () => {
  await assert.rejects(start({ seed: "/nonexistent/people.json" }), (e) => {
    assert.match(e.message, /exited at start with status 1/);
    assert.match(e.message, /\/nonexistent\/people\.json/);
    return true;
  });
  await assert.rejects(start({ sede: [] }), { name: "TypeError", message: "resourcedir: start() takes seed, args and timeout, not sede" });
});

test("a closed namespace is gone", async () => {
  const dir = await connect();
  assert.match(dir.name, /^ns-[0-9a-f]{16}$/);
  await dir.seed([{ Company: "Gone Ltd" }]);
  await dir.close();
  const { Namespaces } = await (await fetch(`${process.env.RESOURCEDIR_URL}/__admin/namespaces`)).json();
  assert.ok(!Namespaces.some((ns) => ns.Name === dir.name), JSON.stringify(Namespaces));
  await assert.rejects(dir.close(), (e) => e instanceof ResourcedirError && e.status === 404 && e.body.Message === `No namespace is named "${dir.name}".`);
});
