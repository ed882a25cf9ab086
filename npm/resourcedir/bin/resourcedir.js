#!/usr/bin/env node
// Runs the resourcedir binary of this platform's package: the binary is the
// program, this is only how npx finds it. It must not change what a shell
// sees: the same exit status, and each signal sent to this process reaching
// the binary once.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { binaryPath, ownGroup } from "../binary.js";

let binary;
try {
  binary = binaryPath();
} catch (err) {
  console.error(err.message);
  process.exit(1);
}

// The server stops when this process dies, even by SIGKILL (a CI job's
// timeout): it is in a group of its own, where no group kill of ours reaches
// it. The subcommands serve nothing and take no such flag.
const subcommands = ["generate", "import", "compare", "health"];
const args = process.argv.slice(2);
if (!subcommands.includes(args[0])) args.unshift("-exit-with-parent");

// In a group of its own, a terminal's Ctrl-C reaches this process only, and
// the binary gets it from the handler below: once, whether the signal came
// from a terminal or from kill. Not unref'd: this process waits for it.
const child = spawn(binary, args, { stdio: "inherit", detached: ownGroup });

// resourcedir passes SIGINT and SIGTERM on to the command it runs after --.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}

child.on("error", (err) => {
  console.error(`resourcedir: cannot run ${binary}: ${err.message}`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal === null) {
    process.exit(code);
  }
  // Ended by a signal: end the same way, so that the shell sees what
  // it would have seen without this wrapper.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  process.exit(128 + (constants.signals[signal] ?? 0));
});
