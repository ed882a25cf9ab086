#!/usr/bin/env node
// Runs the resourcedir binary of this platform's package (one of this
// package's optionalDependencies, which npm installs by its os and cpu
// fields), as esbuild and Biome do: the binary is the program, this is
// only how npx finds it.
"use strict";

const { spawn } = require("node:child_process");
const { constants } = require("node:os");

const pkg = `@resourcedir/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "resourcedir.exe" : "resourcedir";

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch {
  console.error(
    `resourcedir: ${pkg} is not installed, so there is no binary for ${process.platform}-${process.arch}. ` +
      "Install without --no-optional (or --omit=optional), or, where Go is, " +
      "go install github.com/resourcedir/resourcedir/cmd/resourcedir@latest",
  );
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// resourcedir passes SIGINT and SIGTERM on to the command it runs after --.
// A Ctrl-C at a terminal reaches the whole foreground group, the binary
// included, so passing SIGINT on again would deliver it twice.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    if (sig === "SIGINT" && process.stdin.isTTY) return;
    child.kill(sig);
  });
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
