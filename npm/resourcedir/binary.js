// Where this platform's resourcedir binary is: in the one of this package's
// optionalDependencies that npm installed by its os and cpu fields, as
// esbuild and Biome ship theirs. Shared by the bin wrapper and start().
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** The path of the binary, or an Error that says how to get one. */
export function binaryPath() {
  const pkg = `@resourcedir/${process.platform}-${process.arch}`;
  const exe = process.platform === "win32" ? "resourcedir.exe" : "resourcedir";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    throw new Error(
      `resourcedir: ${pkg} is not installed, so there is no binary for ${process.platform}-${process.arch}. ` +
        "Install without --no-optional (or --omit=optional), or, where Go is, " +
        "go install github.com/resourcedir/resourcedir/cmd/resourcedir@latest",
    );
  }
}

// A detached child has a session (and process group) of its own on Unix, so
// that a terminal's Ctrl-C reaches it only through whoever started it, once.
// On Windows, detached means a console window of its own: not wanted.
export const ownGroup = process.platform !== "win32";
