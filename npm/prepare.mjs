// Lays out the npm packages of one release from goreleaser's dist folder:
// the main package (npm/resourcedir, its version and its
// optionalDependencies' set to the release's) and one package per
// platform holding that platform's binary. Each gets the LICENSE. npm pack
// of each folder it prints makes the tarballs to publish.
//
//   node npm/prepare.mjs DIST OUT
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [distArg, outArg] = process.argv.slice(2);
if (!distArg || !outArg) {
  console.error("usage: node npm/prepare.mjs DIST OUT");
  process.exit(2);
}
const dist = resolve(distArg);
const out = resolve(outArg);
const npmDir = dirname(fileURLToPath(import.meta.url));
const license = join(npmDir, "..", "LICENSE");

const readJSON = (path) => JSON.parse(readFileSync(path, "utf8"));
const writeJSON = (path, value) => writeFileSync(path, JSON.stringify(value, null, 2) + "\n");

// goreleaser's own account of what it built: no guessing at folder names.
const { version } = readJSON(join(dist, "metadata.json"));
const binaries = readJSON(join(dist, "artifacts.json")).filter((a) => a.type === "Binary");

// Go's names for systems and processors, and Node's (process.platform,
// process.arch), which npm matches the os and cpu fields against.
const nodeOS = { linux: "linux", darwin: "darwin", windows: "win32" };
const nodeCPU = { amd64: "x64", arm64: "arm64" };

const main = readJSON(join(npmDir, "resourcedir", "package.json"));
const mainOut = join(out, "resourcedir");
cpSync(join(npmDir, "resourcedir"), mainOut, { recursive: true });
copyFileSync(license, join(mainOut, "LICENSE"));

const platforms = [];
for (const b of binaries) {
  const os = nodeOS[b.goos];
  const cpu = nodeCPU[b.goarch];
  if (!os || !cpu) {
    console.error(`prepare: goreleaser built ${b.goos}/${b.goarch}, which no npm package is for`);
    process.exit(1);
  }
  const name = `@resourcedir/${os}-${cpu}`;
  if (!(name in main.optionalDependencies)) {
    console.error(`prepare: ${name} is not among npm/resourcedir's optionalDependencies`);
    process.exit(1);
  }
  const dir = join(out, `${os}-${cpu}`);
  const exe = os === "win32" ? "resourcedir.exe" : "resourcedir";
  mkdirSync(join(dir, "bin"), { recursive: true });
  // Relative to where goreleaser ran: run this from there too.
  copyFileSync(resolve(b.path), join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  copyFileSync(license, join(dir, "LICENSE"));
  writeJSON(join(dir, "package.json"), {
    name,
    version,
    description: `The ${os} ${cpu} binary of resourcedir, installed by the resourcedir package`,
    license: main.license,
    repository: { ...main.repository, directory: "npm" },
    os: [os],
    cpu: [cpu],
    files: [`bin/${exe}`],
  });
  platforms.push(name);
}
const missing = Object.keys(main.optionalDependencies).filter((n) => !platforms.includes(n));
if (missing.length > 0) {
  console.error(`prepare: goreleaser built no binary for ${missing.join(", ")}`);
  process.exit(1);
}

main.version = version;
for (const name of platforms) main.optionalDependencies[name] = version;
writeJSON(join(mainOut, "package.json"), main);

console.log([mainOut, ...platforms.map((n) => join(out, n.split("/")[1]))].join("\n"));
