#!/usr/bin/env node
// Offline checks of the Kubernetes manifests of a sharded crh run
// (deploy/kubernetes), with no cluster and no kubectl:
//
//  * every resource, rendered as `kubectl apply -k` renders it (namespace,
//    images and the replacements of kustomization.yaml, applied here), and the
//    two files applied by hand, against the Kubernetes API schema of the npm
//    package kubernetes-models: types, enums, required fields, and (as kubectl's
//    strict field validation does) no field the schema does not know;
//  * what the sharded run rests on: an Indexed Job whose parallelism and
//    completions are the ConfigMap's shard count, podReplacementPolicy Failed,
//    backoffLimitPerIndex 0, the key only from a Secret, the shard, start, rate
//    and result file in the command line, and a merge Job that runs `crh report`
//    over the shards' files;
//  * negative controls: broken copies of the manifests (a misspelled field, a
//    wrong type, a retried shard, a literal key, ...) must each fail, so a
//    check that cannot fail is itself a failure.
// When kubectl is installed, its `kubectl kustomize` rendering must also equal this one.
//
//   node tests/deploy/validate.mjs [DIR]        (DIR: deploy/kubernetes by default)
//
// Exit codes: 0 every check held; 1 one failed; 77 skipped: the npm packages are
// not installed (scripts/install-test-tools.sh installs them).
import { readFileSync, readdirSync, existsSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import os from "node:os";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { containerCommand, podSpecOf, ManifestError } from "./manifest_command.mjs";

const SKIP = 77;
const here = path.dirname(fileURLToPath(import.meta.url));

let YAML, schemas;
try {
  YAML = await import("yaml");
  const [{ Job }, { ConfigMap }, { PersistentVolumeClaim }, { Secret }, { Pod }] = await Promise.all([
    import("kubernetes-models/batch/v1/Job"),
    import("kubernetes-models/v1/ConfigMap"),
    import("kubernetes-models/v1/PersistentVolumeClaim"),
    import("kubernetes-models/v1/Secret"),
    import("kubernetes-models/v1/Pod"),
  ]);
  schemas = { "batch/v1 Job": Job, "v1 ConfigMap": ConfigMap, "v1 PersistentVolumeClaim": PersistentVolumeClaim, "v1 Secret": Secret, "v1 Pod": Pod };
} catch (e) {
  if (e.code === "ERR_MODULE_NOT_FOUND") {
    console.log(`deploy.manifests: skipped: the npm packages are not installed (${e.message.split("\n")[0]}); ` +
      "run scripts/install-test-tools.sh (npm ci --prefix tests/deploy)");
    process.exit(SKIP);
  }
  throw e;
}

// ---------------------------------------------------------------- the set of manifests

// The files of DIR that are not resources of kustomization.yaml, on purpose.
const APPLIED_BY_HAND = new Set(["secret.example.yaml", "results-reader.yaml"]);
const KUSTOMIZATION_FIELDS = new Set(["apiVersion", "kind", "namespace", "resources", "images", "replacements"]);
const KNOBS = "crh-knobs", SHARDS_JOB = "crh-shards", MERGE_JOB = "crh-merge", PVC = "crh-results", SECRET = "crh-api-key";
const KEY_PLACEHOLDER = "REPLACE-WITH-THE-TARGET-API-KEY";
const INDEX_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

function parseFile(file) {
  const docs = [];
  for (const doc of YAML.parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length) throw new Error(`${path.basename(file)}: ${doc.errors[0].message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) docs.push(value);
  }
  return docs;
}

function loadSet(dir) {
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  const kustomization = parseFile(path.join(dir, "kustomization.yaml"))[0] ?? {};
  const listed = Array.isArray(kustomization.resources) ? kustomization.resources : [];
  const resources = [];
  for (const f of listed) {
    if (typeof f === "string" && existsSync(path.join(dir, f))) for (const doc of parseFile(path.join(dir, f))) resources.push({ file: f, doc });
  }
  const extras = [];
  for (const f of files) if (APPLIED_BY_HAND.has(f)) for (const doc of parseFile(path.join(dir, f))) extras.push({ file: f, doc });
  return { dir, files, kustomization, resources, extras };
}

// -------------------------------------------------------- kustomize, the part used here

function getPath(obj, fieldPath) {
  return fieldPath.split(".").reduce((o, k) => (o === undefined || o === null ? undefined : o[k]), obj);
}

function setPath(obj, fieldPath, value) {
  const keys = fieldPath.split(".");
  const last = keys.pop();
  const parent = keys.reduce((o, k) => (o[k] ??= {}), obj);
  // As kustomize does, the target keeps its type: "4" replaces an integer as 4.
  parent[last] = typeof parent[last] === "number" && typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
}

const matches = (doc, sel) => Object.entries(sel).every(([k, v]) =>
  k === "kind" ? doc.kind === v : k === "name" ? doc.metadata?.name === v : k === "namespace" ? doc.metadata?.namespace === v : false);

// The resources as `kubectl kustomize` renders them (only the fields allowed above).
function render(set) {
  const k = set.kustomization;
  const docs = set.resources.map(({ file, doc }) => ({ file, doc: structuredClone(doc) }));
  for (const { doc } of docs) {
    if (k.namespace) (doc.metadata ??= {}).namespace = k.namespace;
    const pod = podSpecOf(doc);
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      const name = String(c.image ?? "").replace(/[@:].*$/, "");
      const img = (k.images ?? []).find((i) => i.name === name);
      if (img) c.image = (img.newName ?? name) + (img.digest ? "@" + img.digest : img.newTag !== undefined ? ":" + img.newTag : "");
    }
  }
  for (const r of k.replacements ?? []) {
    const source = docs.find(({ doc }) => matches(doc, { kind: r.source.kind, name: r.source.name }));
    if (!source) throw new Error(`replacement source ${r.source.kind}/${r.source.name} is not a resource`);
    const value = getPath(source.doc, r.source.fieldPath ?? "metadata.name");
    if (value === undefined) throw new Error(`replacement source field ${r.source.fieldPath} is not set`);
    for (const t of r.targets ?? []) {
      const hits = docs.filter(({ doc }) => matches(doc, t.select));
      if (!hits.length) throw new Error(`replacement target ${JSON.stringify(t.select)} selects nothing`);
      for (const { doc } of hits) for (const fp of t.fieldPaths) setPath(doc, fp, value);
    }
  }
  return docs;
}

// ------------------------------------------------------------------- schema, strictly

// Validates `doc` with the kubernetes-models schema of its kind. The package's
// validators check types, enums and required fields but, like the API server
// without strict field validation, let unknown fields through; so the object is
// handed to the validator behind a Proxy that notes every field the validator
// reads. The schema's validator reads every field it knows (and every key of a
// map-typed field), so a field nobody read is one the schema does not know: an
// error, as in `kubectl apply` (strict field validation) and kubeconform -strict.
function schemaProblems(doc) {
  const model = schemas[`${doc.apiVersion} ${doc.kind}`];
  if (!model) return [`no schema here for apiVersion ${doc.apiVersion} kind ${doc.kind}`];
  const read = new Set();
  const watch = (value, at) => (value === null || typeof value !== "object") ? value : new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || !Object.hasOwn(target, key)) return v;
      read.add(`${at}/${key}`);
      return watch(v, `${at}/${key}`);
    },
  });
  const problems = [];
  try {
    model.prototype.validate.call(watch(doc, ""));
  } catch (e) {
    problems.push(`schema: ${e.message.replace(/\bdata\//g, "/")}`);
  }
  const unknown = (value, at) => {
    if (value === null || typeof value !== "object") return;
    for (const key of Object.keys(value)) {
      const p = `${at}/${key}`;
      if (!read.has(p)) problems.push(`unknown field ${p} (not in the Kubernetes API schema)`);
      else unknown(value[key], p);
    }
  };
  unknown(doc, "");
  return problems;
}

// ---------------------------------------------------------------------------- checks

const find = (docs, kind, name) => docs.filter(({ doc }) => doc.kind === kind && doc.metadata?.name === name).map(({ doc }) => doc);
const argAfter = (args, flag) => { const i = args.indexOf(flag); return i === -1 ? undefined : args[i + 1]; };
const envOf = (c, name) => (c?.env ?? []).find((e) => e.name === name);

function checkAll(set, rendered) {
  const results = [];
  const check = (name, fn) => {
    let problems;
    try { problems = fn() ?? []; } catch (e) { problems = [e instanceof ManifestError ? e.message : `${e.message}`]; }
    results.push({ name, problems });
  };
  const k = set.kustomization;

  check("kustomization.yaml lists every manifest, with fields this test renders", () => {
    const p = [];
    for (const f of Object.keys(k)) if (!KUSTOMIZATION_FIELDS.has(f)) p.push(`field ${f}: not rendered by this test (teach render() or drop it)`);
    const listed = new Set(k.resources ?? []);
    for (const f of listed) if (!set.files.includes(f)) p.push(`resource ${f} is not a YAML file of ${set.dir}`);
    for (const f of set.files) if (f !== "kustomization.yaml" && !APPLIED_BY_HAND.has(f) && !listed.has(f)) p.push(`${f} is not in kustomization.yaml's resources`);
    for (const f of APPLIED_BY_HAND) if (listed.has(f)) p.push(`${f} is applied by hand and must not be in resources`);
    for (const [kind, name] of [["ConfigMap", KNOBS], ["PersistentVolumeClaim", PVC], ["Job", SHARDS_JOB], ["Job", MERGE_JOB]])
      if (find(rendered, kind, name).length !== 1) p.push(`want exactly one ${kind} ${name} among the resources`);
    return p;
  });

  for (const { file, doc } of [...rendered, ...set.extras])
    check(`schema: ${doc.kind} ${doc.metadata?.name} (${file})`, () => schemaProblems(doc));

  const knobs = find(rendered, "ConfigMap", KNOBS)[0]?.data ?? {};
  const shards = find(rendered, "Job", SHARDS_JOB)[0];
  const merge = find(rendered, "Job", MERGE_JOB)[0];
  const shardPod = podSpecOf(shards ?? {});
  const mergePod = podSpecOf(merge ?? {});
  const shardC = shardPod?.containers?.[0];
  const mergeC = mergePod?.containers?.[0];
  const configMaps = rendered.filter(({ doc }) => doc.kind === "ConfigMap").map(({ doc }) => doc);

  check(`ConfigMap ${KNOBS} holds every knob`, () => {
    const p = [];
    for (const key of ["CRH_BASE_URL", "CRH_SHARDS", "CRH_START_AT", "CRH_RUN_ID", "CRH_SCENARIO", "CRH_CONNECTIONS", "CRH_DURATION", "CRH_RATE", "CRH_THRESHOLD_LATENCY", "CRH_THRESHOLD_ERRORS"])
      if (typeof knobs[key] !== "string" || knobs[key] === "") p.push(`${key} is missing or empty`);
    if (!/^[1-9]\d*$/.test(knobs.CRH_SHARDS ?? "") || Number(knobs.CRH_SHARDS) > 1024) p.push(`CRH_SHARDS ${JSON.stringify(knobs.CRH_SHARDS)} is not an integer from 1 to 1024 (crh's --shard limit)`);
    else if (/^\d+$/.test(knobs.CRH_CONNECTIONS ?? "") && Number(knobs.CRH_CONNECTIONS) < Number(knobs.CRH_SHARDS)) p.push(`CRH_CONNECTIONS ${knobs.CRH_CONNECTIONS} is fewer than CRH_SHARDS ${knobs.CRH_SHARDS}: a shard would get no connection`);
    if (!/^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)|\d+(\.\d+)?)$/.test(knobs.CRH_START_AT ?? "")) p.push(`CRH_START_AT ${JSON.stringify(knobs.CRH_START_AT)} is neither RFC 3339 nor Unix seconds`);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(knobs.CRH_RUN_ID ?? "")) p.push(`CRH_RUN_ID ${JSON.stringify(knobs.CRH_RUN_ID)} is not a directory name (letters, digits, . _ -)`);
    if (!/^(\d+(\.\d+)?)(\/s)?$/.test(knobs.CRH_RATE ?? "")) p.push(`CRH_RATE ${JSON.stringify(knobs.CRH_RATE)} is not requests per second (a number >= 0; 0: closed loop)`);
    else if (knobs.CRH_SCENARIO === "race" && Number(String(knobs.CRH_RATE).replace(/\/s$/, "")) !== 0) p.push(`CRH_RATE ${knobs.CRH_RATE} with CRH_SCENARIO race: the race is paced by its rounds, CRH_RATE must be 0`);
    if (!/^https?:\/\//.test(knobs.CRH_BASE_URL ?? "")) p.push(`CRH_BASE_URL ${JSON.stringify(knobs.CRH_BASE_URL)} is not an http URL`);
    for (const key of Object.keys(knobs)) if (/KEY|TOKEN|SECRET|PASSWORD/i.test(key)) p.push(`ConfigMap key ${key} looks like a secret: secrets go in a Secret`);
    return p;
  });

  check(`Job ${SHARDS_JOB} is an Indexed Job of CRH_SHARDS pods, each run once`, () => {
    const p = [];
    const s = shards?.spec ?? {};
    const n = Number(knobs.CRH_SHARDS);
    if (s.completionMode !== "Indexed") p.push(`completionMode is ${s.completionMode}, want Indexed`);
    if (!(s.parallelism === n && s.completions === n)) p.push(`parallelism ${s.parallelism} and completions ${s.completions} must both be CRH_SHARDS (${knobs.CRH_SHARDS})`);
    if (s.podReplacementPolicy !== "Failed") p.push(`podReplacementPolicy is ${s.podReplacementPolicy}, want Failed`);
    if (s.backoffLimitPerIndex !== 0) p.push(`backoffLimitPerIndex is ${s.backoffLimitPerIndex}, want 0`);
    if (shardPod?.restartPolicy !== "Never") p.push(`restartPolicy is ${shardPod?.restartPolicy}, want Never`);
    if (shardPod?.containers?.length !== 1) p.push(`want one container, found ${shardPod?.containers?.length}`);
    const idx = envOf(shardC, "JOB_COMPLETION_INDEX");
    if (idx?.valueFrom?.fieldRef?.fieldPath !== INDEX_ANNOTATION) p.push(`env JOB_COMPLETION_INDEX must come from fieldRef ${INDEX_ANNOTATION}`);
    for (const e of shardC?.env ?? []) {
      const ref = e.valueFrom?.configMapKeyRef;
      if (ref && !(configMaps.some((c) => c.metadata.name === ref.name && Object.hasOwn(c.data ?? {}, ref.key))))
        p.push(`env ${e.name} refers to ConfigMap ${ref.name} key ${ref.key}, which does not exist`);
    }
    return p;
  });

  check(`Job ${SHARDS_JOB} runs crh load --shard $(JOB_COMPLETION_INDEX)/N --start-at --json under the results volume`, () => {
    const p = [];
    const args = shardC?.args ?? [];
    if (JSON.stringify(shardC?.command) !== JSON.stringify(["crh"])) p.push(`command is ${JSON.stringify(shardC?.command)}, want ["crh"]`);
    if (args[0] !== "load") p.push(`the first argument is ${JSON.stringify(args[0])}, want load`);
    const shard = argAfter(args, "--shard") ?? "";
    const m = /^\$\(JOB_COMPLETION_INDEX\)\/\$\((\w+)\)$/.exec(shard);
    if (!m) p.push(`--shard is ${JSON.stringify(shard)}, want $(JOB_COMPLETION_INDEX)/$(VAR)`);
    else if (envOf(shardC, m[1])?.valueFrom?.configMapKeyRef?.key !== "CRH_SHARDS") p.push(`--shard's N, $(${m[1]}), must be the ConfigMap's CRH_SHARDS`);
    const start = argAfter(args, "--start-at");
    if (!start || envOf(shardC, start.replace(/^\$\((\w+)\)$/, "$1"))?.valueFrom?.configMapKeyRef?.key !== "CRH_START_AT") p.push(`--start-at is ${JSON.stringify(start)}, want $(VAR) of the ConfigMap's CRH_START_AT`);
    for (const flag of ["--base-url", "--run-id"]) if (!argAfter(args, flag)) p.push(`no ${flag}`);
    const rate = argAfter(args, "--rate");
    if (!rate || envOf(shardC, rate.replace(/^\$\((\w+)\)$/, "$1"))?.valueFrom?.configMapKeyRef?.key !== "CRH_RATE") p.push(`--rate is ${JSON.stringify(rate)}, want $(VAR) of the ConfigMap's CRH_RATE`);
    const json = argAfter(args, "--json") ?? "";
    if (!json.includes("$(JOB_COMPLETION_INDEX)")) p.push(`--json ${JSON.stringify(json)} must name a file per shard ($(JOB_COMPLETION_INDEX))`);
    const mount = resultsMount(shardPod, shardC);
    if (!mount) p.push(`no volumeMount of PersistentVolumeClaim ${PVC}`);
    else if (!json.startsWith(mount.mountPath.replace(/\/$/, "") + "/")) p.push(`--json ${json} is not under the results mount ${mount.mountPath}`);
    // The command resolves, every $(VAR) from the ConfigMap or the pod's index.
    const argv = containerCommand(shards, { configMaps, vars: { JOB_COMPLETION_INDEX: "1" } });
    if (argAfter(argv, "--shard") !== `1/${knobs.CRH_SHARDS}`) p.push(`resolved, --shard is ${argAfter(argv, "--shard")}, want 1/${knobs.CRH_SHARDS}`);
    for (const vm of shardC?.volumeMounts ?? []) if (vm.subPathExpr) {
      const v = /^\$\((\w+)\)$/.exec(vm.subPathExpr);
      if (!v || envOf(shardC, v[1])?.valueFrom?.configMapKeyRef?.key !== "CRH_RUN_ID") p.push(`subPathExpr ${vm.subPathExpr}: want $(VAR) of the ConfigMap's CRH_RUN_ID`);
    }
    return p;
  });

  check("the API key comes only from the Secret", () => {
    const p = [];
    const key = envOf(shardC, "CRH_API_KEY");
    const ref = key?.valueFrom?.secretKeyRef;
    if (!ref || ref.name !== SECRET || ref.key !== "CRH_API_KEY" || key.value !== undefined)
      p.push(`env CRH_API_KEY of ${SHARDS_JOB} must be valueFrom.secretKeyRef {name: ${SECRET}, key: CRH_API_KEY}`);
    for (const { file, doc } of rendered) if (doc.kind === "Secret") p.push(`${file}: a Secret among the applied resources would put a key in the repository`);
    for (const { file, doc } of [...rendered, ...set.extras]) {
      const pod = podSpecOf(doc);
      for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
        for (const e of c.env ?? []) if (/KEY|TOKEN|SECRET|PASSWORD/i.test(e.name) && !e.valueFrom?.secretKeyRef) p.push(`${file}: env ${e.name} is not from a Secret`);
        for (const a of [...(c.command ?? []), ...(c.args ?? [])]) {
          if (/--api-key(?!-file)|CRH_API_KEY/.test(String(a))) p.push(`${file}: the command line of ${c.name} mentions the key: ${JSON.stringify(a)}`);
        }
      }
      if (doc.kind === "Secret") {
        const values = { ...(doc.stringData ?? {}) };
        for (const [n, v] of Object.entries(doc.data ?? {})) values[n] = Buffer.from(String(v), "base64").toString();
        for (const [n, v] of Object.entries(values)) if (v !== KEY_PLACEHOLDER) p.push(`${file}: ${n} holds something other than the placeholder ${KEY_PLACEHOLDER}`);
      }
    }
    return p;
  });

  check(`PersistentVolumeClaim ${PVC} is ReadWriteMany, mounted alike by the shards and the merge`, () => {
    const p = [];
    const pvc = find(rendered, "PersistentVolumeClaim", PVC)[0];
    if (!pvc?.spec?.accessModes?.includes("ReadWriteMany")) p.push(`${PVC} accessModes ${JSON.stringify(pvc?.spec?.accessModes)}: want ReadWriteMany (shards run on several nodes)`);
    const a = resultsMount(shardPod, shardC), b = resultsMount(mergePod, mergeC);
    if (!a || !b) p.push("the shards and the merge must both mount the results volume");
    else if (a.mountPath !== b.mountPath || a.subPathExpr !== b.subPathExpr || a.subPath !== b.subPath)
      p.push(`the shards mount ${JSON.stringify(a)} but the merge ${JSON.stringify(b)}: they must see the same directory`);
    return p;
  });

  check(`Job ${MERGE_JOB} waits, then runs crh report over the shards' files`, () => {
    const p = [];
    const s = merge?.spec ?? {};
    if (s.suspend !== true) p.push("suspend must be true: the merge starts when released, after the shard Job ended");
    if (s.backoffLimit !== 0) p.push(`backoffLimit is ${s.backoffLimit}, want 0 (the exit code is the verdict)`);
    if (mergePod?.restartPolicy !== "Never") p.push(`restartPolicy is ${mergePod?.restartPolicy}, want Never`);
    const argv = containerCommand(merge, { configMaps });
    if (argv[0] !== "crh" || argv[1] !== "report") p.push(`runs ${JSON.stringify(argv.slice(0, 2))}, want crh report`);
    const mount = resultsMount(mergePod, mergeC)?.mountPath?.replace(/\/$/, "");
    const shardJson = argAfter(shardC?.args ?? [], "--json") ?? "";
    const want = shardJson.replaceAll("$(JOB_COMPLETION_INDEX)", "*");
    if (!argv.slice(2).includes(want)) p.push(`does not read ${want} (the shards' --json files)`);
    for (const flag of ["--html", "--json", "--junit"]) {
      const f = argAfter(argv, flag);
      if (!f || !mount || !f.startsWith(mount + "/")) p.push(`${flag} ${f} must be under the results mount ${mount}`);
    }
    return p;
  });
  return results;
}

function resultsMount(pod, container) {
  const vol = (pod?.volumes ?? []).find((v) => v.persistentVolumeClaim?.claimName === PVC);
  return vol && (container?.volumeMounts ?? []).find((m) => m.name === vol.name);
}

// ----------------------------------------------------------------- negative controls

// Each breaks a copy of the rendered manifests; the checks must then fail with `expect`.
const shardsOf = (docs) => find(docs, "Job", SHARDS_JOB)[0];
const CONTROLS = [
  ["a misspelled JobSpec field", /unknown field \/spec\/podReplacementPolicyy/, (d) => { const s = shardsOf(d).spec; s.podReplacementPolicyy = s.podReplacementPolicy; delete s.podReplacementPolicy; }],
  ["an unknown field deep in the pod template", /unknown field \/spec\/template\/spec\/containers\/0\/imagePullPolicyy/, (d) => { shardsOf(d).spec.template.spec.containers[0].imagePullPolicyy = "Always"; }],
  ["a wrong type (parallelism \"4\")", /\/spec\/parallelism must be integer/, (d) => { shardsOf(d).spec.parallelism = String(shardsOf(d).spec.parallelism); }],
  ["a value outside an enum (podReplacementPolicy Faild)", /podReplacementPolicy must be equal to one of the allowed values/, (d) => { shardsOf(d).spec.podReplacementPolicy = "Faild"; }],
  ["podReplacementPolicy TerminatingOrFailed", /podReplacementPolicy is TerminatingOrFailed, want Failed/, (d) => { shardsOf(d).spec.podReplacementPolicy = "TerminatingOrFailed"; }],
  ["a wrong type of a 1.28+ field (backoffLimitPerIndex \"0\")", /\/spec\/backoffLimitPerIndex must be integer/, (d) => { shardsOf(d).spec.backoffLimitPerIndex = "0"; }],
  ["a retried shard (backoffLimitPerIndex 1)", /backoffLimitPerIndex is 1, want 0/, (d) => { shardsOf(d).spec.backoffLimitPerIndex = 1; }],
  ["completions not the shard count", /must both be CRH_SHARDS/, (d) => { shardsOf(d).spec.completions += 1; }],
  ["a NonIndexed Job", /completionMode is NonIndexed/, (d) => { shardsOf(d).spec.completionMode = "NonIndexed"; }],
  ["the key as a literal env value", /CRH_API_KEY of crh-shards must be valueFrom.secretKeyRef/, (d) => { const e = envOf(shardsOf(d).spec.template.spec.containers[0], "CRH_API_KEY"); delete e.valueFrom; e.value = "k3y"; }],
  ["the key on the command line", /mentions the key/, (d) => { shardsOf(d).spec.template.spec.containers[0].args.push("--api-key", "$(CRH_API_KEY)"); }],
  ["a Secret among the applied resources", /a Secret among the applied resources/, (d) => { d.push({ file: "secret.yaml", doc: { apiVersion: "v1", kind: "Secret", metadata: { name: SECRET }, stringData: { CRH_API_KEY: "k3y" } } }); }],
  ["no --rate", /--rate is undefined/, (d) => { const a = shardsOf(d).spec.template.spec.containers[0].args; a.splice(a.indexOf("--rate"), 2); }],
  ["a race with an open-loop rate", /the race is paced by its rounds/, (d) => { const c = find(d, "ConfigMap", KNOBS)[0]; c.data.CRH_SCENARIO = "race"; c.data.CRH_RATE = "500"; }],
  ["no --shard", /--shard is ""/, (d) => { const a = shardsOf(d).spec.template.spec.containers[0].args; a.splice(a.indexOf("--shard"), 2); }],
  ["--json outside the results volume", /is not under the results mount/, (d) => { const a = shardsOf(d).spec.template.spec.containers[0].args; a[a.indexOf("--json") + 1] = "/tmp/shard-$(JOB_COMPLETION_INDEX).json"; }],
  ["a merge that does not run crh report", /want crh report/, (d) => { find(d, "Job", MERGE_JOB)[0].spec.template.spec.containers[0].args = ["exec crh run --json /results/x.json"]; }],
  ["a merge that starts at once", /suspend must be true/, (d) => { find(d, "Job", MERGE_JOB)[0].spec.suspend = false; }],
];

// ------------------------------------------------- manifest_command.mjs, as a test runs it

function checkManifestCommand(dir, rendered) {
  const results = [];
  const tool = path.join(here, "manifest_command.mjs");
  const run = (args, opts = {}) => spawnSync(process.execPath, [tool, ...args], { encoding: "utf8", ...opts });
  const fileOf = (kind, name) => rendered.find(({ doc }) => doc.kind === kind && doc.metadata?.name === name)?.file;
  const shardsFile = path.join(dir, fileOf("Job", SHARDS_JOB) ?? "missing.yaml");
  const mergeFile = path.join(dir, fileOf("Job", MERGE_JOB) ?? "missing.yaml");
  const knobsFile = path.join(dir, fileOf("ConfigMap", KNOBS) ?? "missing.yaml");
  const n = find(rendered, "ConfigMap", KNOBS)[0]?.data?.CRH_SHARDS;
  const tmp = mkdtempSync(path.join(os.tmpdir(), "crh-manifest-command-"));
  const check = (name, fn) => {
    let problems;
    try { problems = fn(); } catch (e) { problems = [e.message]; }
    results.push({ name, problems });
  };
  try {
    check("manifest_command.mjs prints the shard's command, $(VAR)s, binary and mount replaced", () => {
      const r = run(["--configmap", knobsFile, "--binary", "/opt/crh", "--mount", `/results=${tmp}`, shardsFile, "JOB_COMPLETION_INDEX=2", "CRH_BASE_URL=http://127.0.0.1:8080"]);
      if (r.status !== 0) return [`exit ${r.status}: ${r.stderr.trim()}`];
      const argv = r.stdout.split("\n").slice(0, -1);
      const p = [];
      if (argv[0] !== "/opt/crh" || argv[1] !== "load") p.push(`starts ${JSON.stringify(argv.slice(0, 2))}, want ["/opt/crh","load"]`);
      if (argAfter(argv, "--shard") !== `2/${n}`) p.push(`--shard ${argAfter(argv, "--shard")}, want 2/${n}`);
      if (argAfter(argv, "--base-url") !== "http://127.0.0.1:8080") p.push(`--base-url ${argAfter(argv, "--base-url")}: VAR=value did not override the ConfigMap`);
      if (argAfter(argv, "--json") !== `${tmp}/shard-2.json`) p.push(`--json ${argAfter(argv, "--json")}, want ${tmp}/shard-2.json`);
      if (argv.some((a) => a.includes("$("))) p.push(`a $(VAR) is left: ${argv.join(" ")}`);
      const z = run(["-0", "--no-program", "--configmap", knobsFile, shardsFile, "JOB_COMPLETION_INDEX=0"]);
      const zargv = z.stdout.split("\0");
      if (z.status !== 0 || zargv[0] !== "load" || zargv.at(-1) !== "") p.push(`-0 --no-program: exit ${z.status}, ${JSON.stringify(z.stdout.slice(0, 40))}`);
      return p;
    });
    check("manifest_command.mjs prints the merge's command, its glob expanded in the mounted directory", () => {
      for (const f of ["shard-1.json", "shard-0.json", "shard-0.json.tmp.7", "merged.json"]) writeFileSync(path.join(tmp, f), "{}");
      const r = run(["--configmap", knobsFile, "--binary", "/opt/crh", "--mount", `/results=${tmp}`, mergeFile]);
      if (r.status !== 0) return [`exit ${r.status}: ${r.stderr.trim()}`];
      const argv = r.stdout.split("\n").slice(0, -1);
      const want = ["/opt/crh", "report", `${tmp}/shard-0.json`, `${tmp}/shard-1.json`];
      return JSON.stringify(argv.slice(0, 4)) === JSON.stringify(want) && argAfter(argv, "--html") === `${tmp}/report.html`
        ? [] : [`printed ${JSON.stringify(argv)}, want it to start ${JSON.stringify(want)} and write --html ${tmp}/report.html`];
    });
    check("manifest_command.mjs refuses what it cannot resolve (exit 2)", () => {
      const p = [];
      for (const [why, args] of [
        ["an undeclared variable", ["--configmap", knobsFile, shardsFile, "JOB_COMPLETION_INDEX=0", "NO_SUCH_VAR=1"]],
        ["the Secret-backed key given as a value", ["--configmap", knobsFile, shardsFile, "JOB_COMPLETION_INDEX=0", "CRH_API_KEY=k3y"]],
        ["no value for the pod's index", ["--configmap", knobsFile, shardsFile]],
        ["no value for a ConfigMap knob", [shardsFile, "JOB_COMPLETION_INDEX=0"]],
        ["a mount the container does not have", ["--configmap", knobsFile, "--mount", `/nowhere=${tmp}`, shardsFile, "JOB_COMPLETION_INDEX=0"]],
      ]) {
        const r = run(args);
        if (r.status !== 2 || r.stdout !== "") p.push(`${why}: exit ${r.status}, stdout ${JSON.stringify(r.stdout.slice(0, 60))}; want exit 2 and nothing printed`);
      }
      return p;
    });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return results;
}

// ------------------------------------------------------------------------------ main

function sortedJSON(v) {
  if (Array.isArray(v)) return v.map(sortedJSON);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortedJSON(v[k])]));
  return v;
}

async function main() {
  const dir = path.resolve(process.argv[2] ?? path.join(here, "..", "..", "deploy", "kubernetes"));
  let passed = 0, failed = 0;
  const report = (ok, name, problems = []) => {
    if (ok) passed++; else failed++;
    console.log(`${ok ? "ok  " : "FAIL"} ${name}`);
    for (const pr of problems) console.log(`       ${pr}`);
  };

  let set, rendered;
  try {
    set = loadSet(dir);
    rendered = render(set);
  } catch (e) {
    report(false, `read and render ${dir}`, [e.message]);
    console.log(`deploy.manifests: ${passed} passed, ${failed} failed`);
    return 1;
  }

  for (const { name, problems } of checkAll(set, rendered)) report(problems.length === 0, name, problems);

  for (const [what, expect, breakIt] of CONTROLS) {
    const broken = rendered.map(({ file, doc }) => ({ file, doc: structuredClone(doc) }));
    let problems;
    try {
      breakIt(broken);
      problems = checkAll(set, broken).flatMap((r) => r.problems);
    } catch (e) {
      problems = [`(the control itself threw: ${e.message})`];
    }
    const hit = problems.find((pr) => expect.test(pr));
    report(Boolean(hit), `control: ${what} is refused`, hit ? [hit] : [`no check failed as ${expect} expects; the problems were: ${problems.join("; ") || "none"}`]);
  }

  for (const { name, problems } of checkManifestCommand(dir, rendered)) report(problems.length === 0, name, problems);

  const kubectl = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
  if (kubectl.error && kubectl.error.code === "ENOENT") {
    console.log("note: kubectl is not installed; the rendering above was not compared with `kubectl kustomize`");
  } else if (kubectl.status !== 0) {
    report(false, "kubectl kustomize renders the directory", [(kubectl.stderr || String(kubectl.error)).trim()]);
  } else {
    const theirs = YAML.parseAllDocuments(kubectl.stdout).map((d) => d.toJS()).filter(Boolean);
    const key = (d) => `${d.kind}/${d.metadata?.name}`;
    const mine = new Map(rendered.map(({ doc }) => [key(doc), JSON.stringify(sortedJSON(doc))]));
    const diff = [];
    for (const d of theirs) if (mine.get(key(d)) !== JSON.stringify(sortedJSON(d))) diff.push(`${key(d)} differs`);
    if (theirs.length !== mine.size) diff.push(`kubectl renders ${theirs.length} resources, this test ${mine.size}`);
    report(diff.length === 0, "kubectl kustomize renders what this test validated", diff);
  }

  console.log(`deploy.manifests: ${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
