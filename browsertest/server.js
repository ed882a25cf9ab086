// Builds resourcedir and runs it on a free loopback port for the tests.
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repo = path.resolve(__dirname, '..');
let built;

// WAIT_MS bounds every wait of the browser tests: for the server to start,
// for the page to show something. A wait ends as soon as what it waits for
// happens; the bound only says when to give up, and a loaded CI machine
// must not reach it.
const WAIT_MS = 20000;

// build compiles the binary once per test process (RESOURCEDIR_BIN names
// one already built).
function build() {
  if (!built && process.env.RESOURCEDIR_BIN) built = process.env.RESOURCEDIR_BIN;
  if (!built) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resourcedir-browsertest-'));
    built = path.join(dir, 'resourcedir');
    execFileSync('go', ['build', '-o', built, './cmd/resourcedir'], { cwd: repo, stdio: 'inherit' });
  }
  return built;
}

function supportsAddrFile(bin) {
  const help = require('node:child_process').spawnSync(bin, ['-help'], { encoding: 'utf8' });
  return /-addr-file/.test(help.stdout + help.stderr);
}

// start runs the server and resolves to {url, stop, logs()}. The URL comes
// from -addr-file when the binary has it, else from the "serving" log line.
async function start(extraArgs = []) {
  const bin = build();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resourcedir-run-'));
  const addrFile = path.join(dir, 'addr');
  const args = ['-addr', '127.0.0.1:0', '-snapshot', '', ...extraArgs];
  const useFile = supportsAddrFile(bin);
  if (useFile) args.push('-addr-file', addrFile);
  const child = spawn(bin, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + WAIT_MS;
  let url;
  while (!url) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('resourcedir ' + args.join(' ') + ' exited before reporting its address: ' + output);
    if (Date.now() > deadline) {
      child.kill();
      throw new Error('resourcedir ' + args.join(' ') + ' did not report its address within ' + WAIT_MS + ' ms: ' + output);
    }
    if (useFile && fs.existsSync(addrFile)) {
      url = fs.readFileSync(addrFile, 'utf8').trim() || undefined;
    } else {
      const m = /serving.*?addr=(http:\/\/127\.0\.0\.1:\d+)/.exec(output) || /"addr":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output);
      if (m) url = m[1];
    }
    if (!url) await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url,
    logs: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

module.exports = { start, repo, WAIT_MS };
