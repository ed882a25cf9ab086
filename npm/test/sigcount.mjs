// The command run after -- by .ci/node's signal checks: it writes "ready"
// once running, logs each SIGINT it gets and exits 40 + their number half a
// second after the first, so that a second one, had it come, is counted.
import { appendFileSync, writeFileSync } from "node:fs";

const [log, ready] = process.argv.slice(2);
let sigints = 0;
process.on("SIGINT", () => {
  appendFileSync(log, "SIGINT\n");
  if (++sigints === 1) setTimeout(() => process.exit(40 + sigints), 500);
});
// Not expected: logged, and the end, so that nothing waits on it.
process.on("SIGTERM", () => {
  appendFileSync(log, "SIGTERM\n");
  process.exit(50);
});
writeFileSync(ready, "");
setInterval(() => {}, 60_000);
