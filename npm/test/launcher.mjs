// A test process that start()s a server and is then killed (.ci/node): with
// "hold" it waits to be killed with SIGKILL, and the server must not outlive
// it; with "forget" it ends without close(), and must neither hang nor leave
// the server behind.
import { writeFileSync } from "node:fs";
import { start } from "resourcedir";

const [mode, pidFile] = process.argv.slice(2);
const server = await start();
writeFileSync(pidFile, `${server.pid}\n`);
if (mode === "hold") setInterval(() => {}, 60_000);
