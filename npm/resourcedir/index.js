// resourcedir for Node's tests: start() runs this platform's binary on a
// free loopback port for the test process, connect() uses the server that
// `resourcedir -- node --test` started, and a Directory drives one
// namespace's test-double controls (/__admin/) as Go's resourcedir.Directory
// does. Data keeps the wire's names (Method, Path, Status, ...). Standard
// library only: global fetch, and node:https where a CA file is to be trusted.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryPath, ownGroup } from "./binary.js";

const urlVar = "RESOURCEDIR_URL";
const caFileVar = "RESOURCEDIR_CA_FILE";
const defaultStartTimeout = 10_000;
const closeTimeout = 10_000;
// The longest wait the journal grants (60 s), and a margin for the answer.
const maxWaitMs = 60_000;
// What a namespace's name may hold (the server adds "-" and 16 hex digits).
const maxPrefix = 47;
const asyncDispose = Symbol.asyncDispose ?? Symbol.for("nodejs.asyncDispose");

/** An answer other than the one a control expects: status and the server's error body. */
export class ResourcedirError extends Error {
  constructor(message, status, body) {
    super(message);
    this.name = "ResourcedirError";
    this.status = status;
    this.body = body;
  }
}

/**
 * One directory of a server: the unprefixed paths (the namespace "default")
 * or a namespace's /ns/{name}. `url` is what the client under test is given
 * as its base URL.
 */
export class Directory {
  #root;
  #ca;

  constructor(url, name, root, ca) {
    this.url = url;
    this.name = name;
    this.#root = root;
    this.#ca = ca;
  }

  /** Adds a fault after the others; returns its Id. */
  async addFault(fault) {
    // A fault as listed can be added again: Id and Fired are the server's.
    const { Id, Fired, ...spec } = fault;
    const { Faults } = await this.#call("POST", "/__admin/faults", spec);
    if (Faults.length !== 1) {
      throw new ResourcedirError(`resourcedir: POST ${this.url}/__admin/faults added ${Faults.length} faults, want 1`, 200, Faults);
    }
    return Faults[0].Id;
  }

  /** The faults, in the order they are tried, each with how often it Fired. */
  async faults() {
    return (await this.#call("GET", "/__admin/faults")).Faults;
  }

  async removeFault(id) {
    await this.#call("DELETE", `/__admin/faults/${encodeURIComponent(id)}`);
  }

  async clearFaults() {
    await this.#call("DELETE", "/__admin/faults");
  }

  /**
   * The journal's entries that filter selects (method, path, status, since,
   * limit: the query's names), oldest first.
   */
  async requests(filter = {}) {
    return (await this.#call("GET", `/__admin/requests${query(filter)}`)).Requests;
  }

  /**
   * Waits up to timeout ms (5000 by default, at most 60000) until at least
   * count entries match the filter, and returns them: one question for a
   * client that sends its requests later. Fewer by then is an error.
   */
  async waitRequests(count, { timeout = 5000, ...filter } = {}) {
    const q = query({ ...filter, count, wait: `${timeout}ms` });
    const { Requests } = await this.#call("GET", `/__admin/requests${q}`);
    if (Requests.length < count) {
      const err = new ResourcedirError(
        `resourcedir: waited ${timeout} ms for ${count} requests matching ${query(filter) || "(any)"} in ${this.name}, got ${Requests.length}`,
        200,
        undefined,
      );
      err.requests = Requests;
      throw err;
    }
    return Requests;
  }

  /** Empties the journal; Seq goes on from where it was. */
  async clearRequests() {
    await this.#call("DELETE", "/__admin/requests");
  }

  /** Back to the seed, with an empty journal and no faults. */
  async reset() {
    await this.#call("POST", "/__admin/reset");
  }

  /** Adds resources, all or none (create rules; an Id may be given); returns their Ids in order. */
  async seed(resources) {
    return (await this.#call("POST", "/__admin/resources", resources)).Ids;
  }

  /** Adds n generated resources, the same ones for the same randSeed; returns their Ids. */
  async generate(n, randSeed) {
    const body = randSeed === undefined ? { Count: n } : { Count: n, Seed: randSeed };
    return (await this.#call("POST", "/__admin/generate", body)).Ids;
  }

  /** Every resource, in creation order. */
  async resources() {
    return (await this.#call("GET", "/__admin/resources")).Data;
  }

  /** Removes every resource, the seed's included, until the next reset. */
  async clearResources() {
    await this.#call("DELETE", "/__admin/resources");
  }

  /** Deletes the namespace, its resources, journal and faults. */
  async close() {
    await send("DELETE", `${this.#root}/__admin/namespaces/${encodeURIComponent(this.name)}`, undefined, this.#ca);
  }

  [asyncDispose]() {
    return this.close();
  }

  #call(method, path, body) {
    return send(method, this.url + path, body, this.#ca);
  }
}

/** A server that start() runs: stopped by close(), or when this process ends. */
export class Server {
  #child;
  #exited;
  #output;
  #dir;
  #ca;

  constructor(url, child, exited, output, dir, ca, caFile) {
    this.url = url;
    this.caFile = caFile;
    this.#child = child;
    this.#exited = exited;
    this.#output = output;
    this.#dir = dir;
    this.#ca = ca;
    // At this process's exit, a server not closed is stopped without a wait.
    live.set(this, () => {
      child.kill("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    });
  }

  /** The binary's process id. */
  get pid() {
    return this.#child.pid;
  }

  /**
   * A fresh namespace (seeded as the server, with its own journal and
   * faults) named prefix-<16 hex digits>; characters a name may not hold
   * become dashes, so a test's name will do.
   */
  namespace(prefix) {
    return newNamespace(this.url, this.#ca, prefix);
  }

  /** Stops the server as SIGTERM does and waits for it. */
  async close() {
    try {
      if (this.#child.exitCode === null && this.#child.signalCode === null) {
        // Held until it has exited: the wait below must not end with this process.
        this.#child.ref();
        this.#child.kill("SIGTERM");
        let timer;
        const late = new Promise((resolve) => {
          timer = setTimeout(resolve, closeTimeout, "late");
        });
        const result = await Promise.race([this.#exited, late]);
        clearTimeout(timer);
        if (result === "late") {
          this.#child.kill("SIGKILL");
          await this.#exited;
          throw new Error(`resourcedir: the server (pid ${this.pid}) did not stop within ${closeTimeout} ms of SIGTERM, and was killed`);
        }
      }
      const { code, signal } = await this.#exited;
      if (code !== 0) {
        throw new Error(`resourcedir: the server exited with ${signal ?? `status ${code}`}${tail(this.#output)}`);
      }
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
      live.delete(this);
    }
  }

  [asyncDispose]() {
    return this.close();
  }
}

// Servers not closed: at this process's exit, stopped and their temporary
// folders removed. A process killed outright leaves them to
// -exit-with-parent, within 2 s.
const live = new Map();
process.on("exit", () => {
  for (const abandon of live.values()) abandon();
});

/**
 * Starts this platform's resourcedir on a free loopback port, in memory,
 * for this process: it stops at close(), at this process's exit, or within
 * 2 s of this process's death however it dies.
 *
 * options.seed: a seed file's path, or an array of resources.
 * options.args: more flags (they win over start()'s own).
 * options.timeout: ms to wait for it to serve (10000).
 */
export async function start(options = {}) {
  const { seed, args = [], timeout = defaultStartTimeout, ...unknown } = options;
  const names = Object.keys(unknown);
  if (names.length > 0) {
    throw new TypeError(`resourcedir: start() takes seed, args and timeout, not ${names.join(", ")}`);
  }
  if (!Array.isArray(args)) throw new TypeError("resourcedir: start()'s args is an array of flags");
  const binary = binaryPath();
  const dir = mkdtempSync(join(tmpdir(), "resourcedir-"));
  try {
    const addrFile = join(dir, "addr");
    const flags = ["-addr", "127.0.0.1:0", "-addr-file", addrFile, "-snapshot", "off", "-log-level", "warn", "-exit-with-parent"];
    if (typeof seed === "string") {
      flags.push("-seed", seed);
    } else if (Array.isArray(seed)) {
      // A file, not a POST: reset() loads the server's seed again.
      writeFileSync(join(dir, "seed.json"), JSON.stringify(seed));
      flags.push("-seed", join(dir, "seed.json"));
    } else if (seed !== undefined) {
      throw new TypeError("resourcedir: start()'s seed is a file's path or an array of resources");
    }
    // With -tls, the CA that signs the server's certificate is written where
    // this handle can read it, unless the flags say where.
    let caFile = flagValue(args, "tls-ca-file");
    if (caFile === undefined && flagValue(args, "tls") !== undefined) {
      caFile = join(dir, "ca.pem");
      flags.push("-tls-ca-file", caFile);
    }
    return await spawnServer(binary, [...flags, ...args], addrFile, dir, caFile, timeout);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function spawnServer(binary, flags, addrFile, dir, caFile, timeout) {
  // Its lines go to standard error, never to standard output, which node
  // --test reads; the last ones are kept for an error's message.
  const output = { text: "" };
  const child = spawn(binary, flags, { stdio: ["ignore", "pipe", "pipe"], detached: ownGroup });
  // close, not exit: its last words have come through the pipes by then.
  const exited = new Promise((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal }));
    child.on("error", (err) => resolve({ code: null, signal: null, err }));
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.on("data", (chunk) => {
      process.stderr.write(chunk);
      output.text = (output.text + chunk).slice(-4096);
    });
  }
  const deadline = Date.now() + timeout;
  let url = "";
  let stopped;
  exited.then((how) => {
    stopped = how;
  });
  while (url === "") {
    if (stopped) {
      if (stopped.err) throw new Error(`resourcedir: cannot run ${binary}: ${stopped.err.message}`);
      throw new Error(`resourcedir: ${binary} exited at start with ${stopped.signal ?? `status ${stopped.code}`}${tail(output)}`);
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`resourcedir: ${binary} wrote no -addr-file within ${timeout} ms${tail(output)}`);
    }
    try {
      url = readFileSync(addrFile, "utf8").trim();
    } catch (err) {
      if (err.code !== "ENOENT") throw err;
    }
    if (url === "") await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ca = url.startsWith("https:") && caFile !== undefined ? readFileSync(caFile) : undefined;
  // A forgotten close() must not keep the test process alive: the exit
  // hook and -exit-with-parent stop the server then.
  child.unref();
  child.stdout.unref();
  child.stderr.unref();
  return new Server(url, child, exited, output, dir, ca, ca === undefined ? undefined : caFile);
}

/**
 * A fresh namespace of the server that RESOURCEDIR_URL names, as
 * `resourcedir -- node --test` sets it; an https URL is trusted through the
 * CA file that RESOURCEDIR_CA_FILE names. prefix as in Server.namespace.
 */
export async function connect(prefix) {
  const base = (process.env[urlVar] ?? "").replace(/\/+$/, "");
  if (base === "") {
    throw new Error(
      `resourcedir: ${urlVar} is not set: run the tests under a server, as in resourcedir -- node --test (or use start() for one of this process's own)`,
    );
  }
  let parsed;
  try {
    parsed = new URL(base);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new Error(`resourcedir: ${urlVar}=${base} is not a server's URL, such as http://127.0.0.1:8080`);
  }
  let ca;
  const caFile = process.env[caFileVar];
  if (parsed.protocol === "https:" && caFile) {
    try {
      ca = readFileSync(caFile);
    } catch (err) {
      throw new Error(`resourcedir: ${caFileVar}=${caFile}: ${err.message}`);
    }
  }
  return newNamespace(parsed.origin, ca, prefix);
}

// send makes a control request and returns its JSON answer; a status
// other than 2xx is a ResourcedirError with the server's message.
async function send(method, url, body, ca) {
  const headers = {};
  let text;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    text = typeof body === "string" ? body : JSON.stringify(body);
  }
  let answer;
  try {
    answer = ca === undefined ? await sendFetch(method, url, headers, text) : await sendHTTPS(method, url, headers, text, ca);
  } catch (err) {
    throw new Error(`resourcedir: ${method} ${url}: ${err.cause?.message ?? err.message}`, { cause: err });
  }
  let json;
  try {
    json = answer.text === "" ? undefined : JSON.parse(answer.text);
  } catch {
    json = undefined;
  }
  if (answer.status < 200 || answer.status > 299) {
    // The problems each property has say what to change: the Message alone does not.
    let reason = answer.text.trim();
    if (typeof json?.Message === "string") {
      const problems = Object.entries(json.ModelState ?? {}).map(([key, list]) => `${key}: ${[].concat(list).join(" ")}`);
      reason = [json.Message, ...problems].join(" ");
    }
    throw new ResourcedirError(`resourcedir: ${method} ${url}: ${answer.status} ${reason}`, answer.status, json ?? answer.text);
  }
  return json;
}

async function sendFetch(method, url, headers, body) {
  const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(maxWaitMs + 30_000) });
  return { status: res.status, text: await res.text() };
}

function sendHTTPS(method, url, headers, body, ca) {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method, headers, ca, timeout: maxWaitMs + 30_000 }, (res) => {
      res.setEncoding("utf8");
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode, text }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("no answer in time")));
    req.on("error", reject);
    req.end(body);
  });
}

// query is the filter as a query string; undefined values are left out, and
// an unknown name reaches the server, which refuses it naming it.
function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) q.set(name, String(value));
  }
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}

// newNamespace makes a fresh namespace on the server at root.
async function newNamespace(root, ca, prefix) {
  const body = prefix === undefined ? undefined : { Prefix: namespacePrefix(prefix) };
  const { Name, BaseURL } = await send("POST", `${root}/__admin/namespaces`, body, ca);
  return new Directory(BaseURL, Name, root, ca);
}

// namespacePrefix is prefix as the server takes it: cut to the longest,
// with dashes for the characters a name may not hold, as Go's handle does
// with a test's name.
function namespacePrefix(prefix) {
  const p = String(prefix).slice(0, maxPrefix).replace(/[^A-Za-z0-9._-]/g, "-");
  return p === "" ? "node" : p;
}

// flagValue is the value of flag name in args (-name v, -name=v, and the
// same with --), "true" for a boolean given bare, or undefined.
function flagValue(args, name) {
  let value;
  for (let i = 0; i < args.length; i++) {
    const a = String(args[i]);
    if (a === "--") break;
    const m = /^--?([^=]+)(?:=(.*))?$/.exec(a);
    if (!m || m[1] !== name) continue;
    if (m[2] !== undefined) value = m[2];
    else if (name === "tls") value = "true";
    else value = args[++i];
  }
  return value === "false" ? undefined : value;
}

function tail(output) {
  const text = output.text.trim();
  return text === "" ? "" : `:\n${text}`;
}
