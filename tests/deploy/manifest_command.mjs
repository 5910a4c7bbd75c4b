#!/usr/bin/env node
// Prints the command line a container of a Kubernetes manifest runs, with its
// $(VAR) references replaced as Kubernetes replaces them, so that a test runs
// exactly the command the manifest runs (read from the manifest, not copied).
//
//   node tests/deploy/manifest_command.mjs [options] MANIFEST [VAR=value ...]
//
//   --job NAME         the Job (or Pod) of MANIFEST to read; needed when it holds several
//   --container NAME   the container; needed when the pod has several
//   --configmap FILE   take configMapKeyRef values from the ConfigMaps in FILE
//                      (e.g. deploy/kubernetes/knobs.yaml); VAR=value pairs override them
//   --binary PATH      print PATH in place of the program (crh in the manifests)
//   --no-program       print only the program's arguments
//   --mount PATH=DIR   the container's volumeMount at PATH is DIR here: arguments
//                      under PATH are rewritten under DIR (and a glob is expanded in DIR)
//   -0, --null         end each argument with NUL instead of a newline
//
// VAR=value gives a variable of the container's env its value (the downward
// API's JOB_COMPLETION_INDEX, say, or a knob). A variable the command refers to
// that has no value, or that the container does not declare, is an error, as
// is a reference to a Secret-backed variable (a key must never be an argument).
// `sh -c 'exec WORD...'` (the merge Job's form) is read as the argv it execs,
// its globs expanded as sh would; any other shell syntax is refused.
//
// Exit codes: 0 printed; 2 usage, or a manifest this cannot read.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Loaded lazily so that `validate.mjs` can report a missing node_modules as a skip.
async function parseAllDocuments(text) {
  const { parseAllDocuments: parse } = await import("yaml");
  return parse(text);
}

export class ManifestError extends Error {}

// Every YAML document of `file`, as plain objects (a document that fails to parse is an error).
export async function loadDocuments(file) {
  const text = readFileSync(file, "utf8");
  const docs = [];
  for (const doc of await parseAllDocuments(text)) {
    if (doc.errors.length) throw new ManifestError(`${file}: ${doc.errors[0].message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) docs.push(value);
  }
  return docs;
}

// The pod spec of a Job, a Pod, or anything with spec.template.spec.
export function podSpecOf(workload) {
  if (workload.kind === "Pod") return workload.spec;
  return workload.spec?.template?.spec;
}

export function findWorkload(docs, name) {
  const workloads = docs.filter((d) => d && (d.kind === "Job" || d.kind === "Pod"));
  const chosen = name === undefined ? workloads : workloads.filter((d) => d.metadata?.name === name);
  if (chosen.length === 1) return chosen[0];
  const names = workloads.map((d) => `${d.kind}/${d.metadata?.name}`).join(", ") || "none";
  if (name === undefined) throw new ManifestError(`${chosen.length ? "several" : "no"} Jobs or Pods (${names}): choose one with --job`);
  throw new ManifestError(`no Job or Pod named ${name} (there are: ${names})`);
}

export function findContainer(workload, name) {
  const containers = podSpecOf(workload)?.containers ?? [];
  const chosen = name === undefined ? containers : containers.filter((c) => c.name === name);
  if (chosen.length === 1) return chosen[0];
  const names = containers.map((c) => c.name).join(", ") || "none";
  if (name === undefined) throw new ManifestError(`${workload.metadata?.name} has ${containers.length} containers (${names}): choose one with --container`);
  throw new ManifestError(`${workload.metadata?.name} has no container ${name} (there are: ${names})`);
}

// Kubernetes' expansion of command, args and subPathExpr
// (k8s.io/kubernetes/third_party/forked/golang/expansion): $(VAR) is VAR's value
// when the container defines VAR, `$$` is `$`, anything else stays as written.
// Here an undefined or value-less reference is an error instead of literal text.
export function expand(text, lookup, where) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "$" || i + 1 >= text.length) { out += text[i]; continue; }
    const next = text[i + 1];
    if (next === "$") { out += "$"; i++; continue; }
    if (next === "(") {
      const close = text.indexOf(")", i + 2);
      if (close !== -1) {
        const name = text.slice(i + 2, close);
        out += lookup(name, where);
        i = close;
        continue;
      }
    }
    out += "$";
  }
  return out;
}

// The container's environment as Kubernetes builds it, as far as it can be
// known here: name -> {value} | {secret: true} | {unknown: "why"}.
export function resolveEnv(container, { configMaps = [], vars = {} } = {}) {
  const env = new Map();
  for (const [name] of Object.entries(vars)) {
    if (!(container.env ?? []).some((e) => e.name === name))
      throw new ManifestError(`${name}=... given, but container ${container.name} has no env variable ${name}`);
  }
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    if (from?.secretKeyRef) {
      if (Object.hasOwn(vars, e.name)) throw new ManifestError(`${e.name} comes from a Secret; it is not given on a command line`);
      env.set(e.name, { secret: true });
    } else if (Object.hasOwn(vars, e.name)) {
      env.set(e.name, { value: String(vars[e.name]) });
    } else if (from?.configMapKeyRef) {
      const { name, key } = from.configMapKeyRef;
      const cm = configMaps.find((c) => c.metadata?.name === name);
      if (cm && cm.data && Object.hasOwn(cm.data, key)) env.set(e.name, { value: String(cm.data[key]) });
      else env.set(e.name, { unknown: `ConfigMap ${name} key ${key}${cm ? " is not there" : " (give --configmap FILE, or " + e.name + "=value)"}` });
    } else if (from) {
      const source = Object.keys(from)[0];
      const detail = from.fieldRef ? ` ${from.fieldRef.fieldPath}` : "";
      env.set(e.name, { unknown: `${source}${detail} (give ${e.name}=value)` });
    } else {
      // A literal value may itself refer to variables declared before it.
      env.set(e.name, { value: expand(String(e.value ?? ""), lookupIn(env, "earlier"), `env ${e.name}`) });
    }
  }
  return env;
}

function lookupIn(env, scope) {
  return (name, where) => {
    const v = env.get(name);
    if (!v) throw new ManifestError(`${where} refers to $(${name}), which the container does not define${scope === "earlier" ? " before it" : ""}`);
    if (v.secret) throw new ManifestError(`${where} refers to $(${name}), which comes from a Secret: a key must never be an argument`);
    if (v.unknown !== undefined) throw new ManifestError(`${where} refers to $(${name}), whose value is not known here: ${v.unknown}`);
    return v.value;
  };
}

// `sh -c 'exec WORD...'`: the words, or null when the command is not of that form.
const SHELLS = new Set(["sh", "/bin/sh", "/usr/bin/sh"]);
const SAFE_WORD = /^[A-Za-z0-9_./*?=:,@%+-]+$/;
export function execScriptWords(argv) {
  if (argv.length < 3 || !SHELLS.has(argv[0]) || argv[1] !== "-c") return null;
  if (argv.length > 3) throw new ManifestError(`sh -c with arguments after the script is not modelled here`);
  const words = argv[2].trim().split(/\s+/);
  if (words[0] !== "exec" || words.length < 2)
    throw new ManifestError(`the shell script must be "exec PROGRAM ARG...": ${JSON.stringify(argv[2])}`);
  for (const w of words) {
    if (!SAFE_WORD.test(w)) throw new ManifestError(`the shell script uses shell syntax not modelled here (${JSON.stringify(w)}): ${JSON.stringify(argv[2])}`);
  }
  return words.slice(1);
}

function parseMounts(mounts, container) {
  const mountPaths = (container.volumeMounts ?? []).map((m) => m.mountPath.replace(/\/+$/, ""));
  return Object.entries(mounts).map(([inside, outside]) => {
    const mp = inside.replace(/\/+$/, "");
    if (!mountPaths.includes(mp)) throw new ManifestError(`--mount ${inside}: container ${container.name} mounts nothing there (its mounts: ${mountPaths.join(", ") || "none"})`);
    return [mp, outside.replace(/\/+$/, "")];
  });
}

function remap(arg, mounts) {
  const one = (s) => {
    for (const [inside, outside] of mounts) {
      if (s === inside) return outside;
      if (s.startsWith(inside + "/")) return outside + s.slice(inside.length);
    }
    return s;
  };
  const mapped = one(arg);
  if (mapped !== arg) return mapped;
  const eq = arg.indexOf("=");
  if (arg.startsWith("-") && eq !== -1) return arg.slice(0, eq + 1) + one(arg.slice(eq + 1));
  return arg;
}

// sh's pathname expansion of one word with * and ? in its last component: the
// matches in byte order (the C locale), or the word itself when nothing matches.
function glob(word) {
  if (!/[*?]/.test(word)) return [word];
  const dir = path.posix.dirname(word);
  const base = path.posix.basename(word);
  if (/[*?]/.test(dir)) throw new ManifestError(`a glob in a directory name is not modelled here: ${word}`);
  const re = new RegExp("^" + base.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$");
  let names = [];
  try { names = readdirSync(dir); } catch { names = []; }
  const hits = names.filter((n) => re.test(n) && !(n.startsWith(".") && !base.startsWith("."))).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  return hits.length ? hits.map((n) => (word.includes("/") ? path.posix.join(dir, n) : n)) : [word];
}

// The argv the container runs, $(VAR)s replaced. Options as the CLI's.
export function containerCommand(workload, { container: containerName, configMaps = [], vars = {}, binary, noProgram = false, mounts = {} } = {}) {
  const container = findContainer(workload, containerName);
  if (!container.command || container.command.length === 0)
    throw new ManifestError(`container ${container.name} has no command: the image's ENTRYPOINT would run, which the manifest does not show`);
  const env = resolveEnv(container, { configMaps, vars });
  const lookup = lookupIn(env, "all");
  let argv = [...container.command, ...(container.args ?? [])].map((a, i) => expand(String(a), lookup, `argument ${i}`));
  const mapping = parseMounts(mounts, container);
  const words = execScriptWords(argv);
  if (words) {
    argv = words.map((w) => remap(w, mapping)).flatMap(glob);
  } else {
    argv = argv.map((a) => remap(a, mapping));
  }
  if (noProgram) return argv.slice(1);
  if (binary !== undefined) argv[0] = binary;
  return argv;
}

function usage(message) {
  process.stderr.write(`manifest_command: ${message}\n` +
    "usage: manifest_command.mjs [--job NAME] [--container NAME] [--configmap FILE]... [--binary PATH | --no-program]\n" +
    "                            [--mount PATH=DIR]... [-0] MANIFEST [VAR=value]...\n");
  process.exit(2);
}

async function main(args) {
  const opts = { configMapFiles: [], mounts: {}, vars: {}, nul: false, noProgram: false };
  let manifest;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => (i + 1 < args.length ? args[++i] : usage(`${a} needs a value`));
    if (a === "--job") opts.job = value();
    else if (a === "--container") opts.container = value();
    else if (a === "--configmap") opts.configMapFiles.push(value());
    else if (a === "--binary") opts.binary = value();
    else if (a === "--no-program") opts.noProgram = true;
    else if (a === "-0" || a === "--null") opts.nul = true;
    else if (a === "--mount") {
      const m = value();
      const eq = m.indexOf("=");
      if (eq <= 0 || eq === m.length - 1) usage(`--mount wants PATH=DIR, not ${m}`);
      opts.mounts[m.slice(0, eq)] = m.slice(eq + 1);
    } else if (a === "-h" || a === "--help") {
      const lines = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1);
      const header = lines.slice(0, lines.findIndex((l) => !l.startsWith("//")));
      process.stdout.write(header.map((l) => l.replace(/^\/\/ ?/, "")).join("\n") + "\n");
      return 0;
    } else if (a.startsWith("-")) usage(`unknown option ${a}`);
    else if (manifest === undefined) manifest = a;
    else {
      const eq = a.indexOf("=");
      if (eq <= 0) usage(`expected VAR=value, got ${a}`);
      opts.vars[a.slice(0, eq)] = a.slice(eq + 1);
    }
  }
  if (manifest === undefined) usage("no manifest given");
  if (opts.binary !== undefined && opts.noProgram) usage("--binary and --no-program exclude each other");
  try {
    const docs = await loadDocuments(manifest);
    const configMaps = [];
    for (const f of opts.configMapFiles) configMaps.push(...(await loadDocuments(f)).filter((d) => d.kind === "ConfigMap"));
    const argv = containerCommand(findWorkload(docs, opts.job), { ...opts, configMaps });
    if (!opts.nul) {
      const bad = argv.find((a) => a.includes("\n"));
      if (bad !== undefined) throw new ManifestError(`an argument holds a newline; use -0: ${JSON.stringify(bad)}`);
    }
    process.stdout.write(argv.map((a) => a + (opts.nul ? "\0" : "\n")).join(""));
    return 0;
  } catch (e) {
    if (e instanceof ManifestError || e.code === "ENOENT") {
      process.stderr.write(`manifest_command: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}
