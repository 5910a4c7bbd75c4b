#!/usr/bin/env node
// The checks of tests/cli/shard_e2e_test.sh on the JSON that `crh load --shard`
// and `crh report` wrote, computed here independently of crh: the merged
// histograms are recomputed as the bucket-wise sum of the shards' histograms,
// and their quantiles with the definition of core/histogram.cpp
// (Histogram::quantile), written again below, not called.
//
//   node shard_merge_check.mjs merge MERGED SHARD... [--run-id ID] [--connections N]
//        [--rate R] [--planned-ns NS] [--race] [--breached EXPR] [--held EXPR]...
//   node shard_merge_check.mjs incomplete MERGED --count N --missing I[,I...]
//
// Prints one line per failed check ("FAIL: ..."), a few figures worth quoting
// (`shard start skew: ...`), and exits 0 when every check held, 1 when one
// failed, 2 on usage or an unreadable file.
import { readFileSync } from "node:fs";

let failures = 0;
const fail = (msg) => { failures++; console.log(`FAIL: ${msg}`); };
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function usage(msg) {
  process.stderr.write(`shard_merge_check: ${msg}\n`);
  process.exit(2);
}

function load(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    usage(`cannot read ${file}: ${e.message}`);
  }
}

// The one load document of a `crh report` run document (or a load document itself).
function loadOf(doc, file) {
  if (doc.kind === "load") return doc;
  if (doc.kind === "run" && Array.isArray(doc.loads) && doc.loads.length === 1) return doc.loads[0];
  usage(`${file}: expected a run document holding one load, or a load document (kind ${doc.kind}, ${doc.loads?.length} loads)`);
}

// ---------------------------------------------------------- the histogram, again

// core/histogram.hpp: 2^7 linear sub-buckets per power of two.
const SUB = 128;
function lowestOf(i) {
  const shift = Math.max(0, Math.floor(i / SUB) - 1);
  return (i - shift * SUB) * 2 ** shift;
}
function highestOf(i) {
  const shift = Math.max(0, Math.floor(i / SUB) - 1);
  return lowestOf(i) + 2 ** shift - 1;
}

// The bucket-wise sum of histograms in their JSON form: count, min, max, sum and buckets.
function union(hists) {
  const counts = new Map();
  let count = 0, min = Infinity, max = 0, sum = 0, sumExact = true;
  for (const h of hists) {
    if (!h || h.count === 0) continue;
    if (h.unit !== "ns" || h.precision_bits !== 7) usage(`a histogram of unit ${h.unit}, precision_bits ${h.precision_bits}: expected ns, 7`);
    for (const [i, n] of h.buckets) counts.set(i, (counts.get(i) ?? 0) + n);
    count += h.count;
    min = Math.min(min, h.min);
    max = Math.max(max, h.max);
    if (typeof h.sum !== "number" || !Number.isSafeInteger(h.sum)) sumExact = false;
    else sum += h.sum;
  }
  const buckets = [...counts.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  return { count, min: count ? min : 0, max, sum: sumExact && Number.isSafeInteger(sum) ? sum : undefined, buckets };
}

// Histogram::quantile: the midpoint of the bucket holding the sample of rank
// ceil(q*count) (a product within a few ulps of an integer is that integer;
// rank at least 1), clamped to [min, max]; the top rank is max itself.
function quantile(h, q) {
  if (h.count === 0) return 0;
  if (!(q > 0)) q = 0;
  if (q > 1) q = 1;
  const r = q * h.count;
  const nearest = Math.round(r);
  const slack = 4 * Number.EPSILON * Math.max(1, r);
  const rankD = Math.abs(r - nearest) <= slack ? nearest : Math.ceil(r);
  const rank = Math.min(Math.max(rankD, 1), h.count);
  if (rank === h.count) return h.max;
  let seen = 0;
  for (const [i, n] of h.buckets) {
    seen += n;
    if (seen >= rank) {
      const lo = lowestOf(i);
      const mid = lo + Math.floor((highestOf(i) - lo) / 2);
      return Math.min(Math.max(mid, h.min), h.max);
    }
  }
  return h.max;
}

const QUANTILES = [["p50_ns", 0.5], ["p90_ns", 0.9], ["p99_ns", 0.99], ["p999_ns", 0.999]];

// A latency summary of the merge ({count, p50_ns, ..., histogram}) against the
// union of the shards' histograms: the buckets, and every quantile recomputed.
function checkLatency(where, merged, shardSummaries, quoted) {
  if (!merged?.histogram) { fail(`${where}: the merged result has no histogram`); return; }
  const u = union(shardSummaries.map((s) => s?.histogram));
  const m = merged.histogram;
  if (!same(m.buckets, u.buckets))
    fail(`${where}: the merged buckets are not the bucket-wise sum of the shards' (${m.buckets.length} buckets merged, ${u.buckets.length} in the union)`);
  if (m.count !== u.count) fail(`${where}: merged histogram count ${m.count}, the shards' sum ${u.count}`);
  if (merged.count !== u.count) fail(`${where}: merged count ${merged.count}, the shards' histograms hold ${u.count}`);
  if (u.count && (m.min !== u.min || m.max !== u.max)) fail(`${where}: merged min/max ${m.min}/${m.max} ns, the shards' ${u.min}/${u.max} ns`);
  if (u.sum !== undefined && m.sum !== u.sum) fail(`${where}: merged sum ${m.sum} ns, the shards' sum ${u.sum} ns`);
  for (const [field, q] of QUANTILES) {
    const want = quantile(u, q);
    if (merged[field] !== want) fail(`${where}: merged ${field} ${merged[field]}, recomputed from the union of the shards' buckets ${want}`);
    if (quoted && field === "p99_ns") console.log(`${where}: merged p99 ${merged[field]} ns, recomputed ${want} ns (shards: ${shardSummaries.map((s) => s?.p99_ns ?? "-").join(", ")} ns)`);
  }
  if (u.count && merged.max_ns !== u.max) fail(`${where}: merged max_ns ${merged.max_ns}, the shards' max ${u.max}`);
}

// ------------------------------------------------------------------------ merge

function checkMerge(mergedFile, shardFiles, o) {
  const run = load(mergedFile);
  const merged = loadOf(run, mergedFile);
  const shards = shardFiles.map((f) => loadOf(load(f), f));
  const n = shards.length;
  const sum = (f) => shards.reduce((a, s) => a + (f(s) ?? 0), 0);

  // Verdict and shard set.
  const wantCode = o.breached ? 1 : 0;
  if (run.verdict?.exit_code !== wantCode) fail(`merged run verdict exit_code ${run.verdict?.exit_code} (${run.verdict?.reason}), expected ${wantCode}`);
  const set = merged.shard_set ?? {};
  if (set.complete !== true) fail(`shard_set.complete is ${set.complete}, expected true (${JSON.stringify(set)})`);
  if (set.count !== n) fail(`shard_set.count is ${set.count}, expected ${n}`);
  if (!same(set.present, [...Array(n).keys()])) fail(`shard_set.present is ${JSON.stringify(set.present)}, expected ${JSON.stringify([...Array(n).keys()])}`);
  if (!same(set.missing, []) || !same(set.duplicated, [])) fail(`shard_set.missing ${JSON.stringify(set.missing)}, duplicated ${JSON.stringify(set.duplicated)}, expected none`);
  if (!same(set.late, [])) fail(`shard_set.late is ${JSON.stringify(set.late)}, expected [] (a shard reached --start-at after it had passed: start-up slower than the lead time?)`);
  if (o.runId && set.run_id !== o.runId) fail(`shard_set.run_id ${set.run_id}, expected ${o.runId}`);
  if (!Number.isInteger(set.start_skew_ns) || set.start_skew_ns < 0) fail(`shard_set.start_skew_ns is ${set.start_skew_ns}, expected an integer >= 0`);

  // Each shard's provenance, in its own file and in the merge.
  let connections = 0, rate = 0;
  shards.forEach((s, i) => {
    const rec = s.shards?.[0];
    if (!rec) { fail(`${shardFiles[i]}: no shards[0] record`); return; }
    if (rec.index !== i || rec.count !== n) fail(`${shardFiles[i]}: shard ${rec.index}/${rec.count}, expected ${i}/${n}`);
    if (o.runId && rec.run_id !== o.runId) fail(`${shardFiles[i]}: run_id ${rec.run_id}, expected ${o.runId}`);
    if (typeof rec.started_at !== "string" || !rec.started_at) fail(`${shardFiles[i]}: no started_at`);
    if (rec.late !== false) fail(`${shardFiles[i]}: late is ${rec.late}, expected false (began ${rec.started_at}, planned ${rec.planned_at})`);
    if (o.plannedNs !== undefined && Math.abs(rec.planned_unix_ns - o.plannedNs) > 1000) fail(`${shardFiles[i]}: planned_unix_ns ${rec.planned_unix_ns}, expected ${o.plannedNs} (--start-at)`);
    if (rec.started_unix_ns < rec.planned_unix_ns) fail(`${shardFiles[i]}: began ${rec.started_unix_ns} before --start-at ${rec.planned_unix_ns}`);
    if (rec.requests !== s.totals?.requests) fail(`${shardFiles[i]}: shards[0].requests ${rec.requests}, totals.requests ${s.totals?.requests}`);
    if (s.verdict?.exit_code !== 0) fail(`${shardFiles[i]}: verdict exit_code ${s.verdict?.exit_code} (${s.verdict?.reason}), expected 0 (its thresholds are deferred)`);
    connections += rec.connections;
    rate += rec.rate;
  });
  if (o.connections !== undefined && connections !== o.connections) fail(`the shards' connections add up to ${connections}, expected ${o.connections} (split, not multiplied)`);
  if (o.rate !== undefined && Math.abs(rate - o.rate) > 1e-6 * Math.max(1, o.rate)) fail(`the shards' rates add up to ${rate}, expected ${o.rate} (split, not multiplied)`);

  const recs = merged.shards ?? [];
  if (recs.length !== n) fail(`merged shards[] has ${recs.length} entries, expected ${n}`);
  const offsets = [];
  for (const r of recs) {
    if (typeof r.started_at !== "string" || !r.started_at) fail(`merged shards[${r.index}] has no started_at`);
    if (r.late !== false) fail(`merged shards[${r.index}].late is ${r.late}, expected false`);
    if (!Number.isInteger(r.start_offset_ns) || r.start_offset_ns < 0) fail(`merged shards[${r.index}].start_offset_ns is ${r.start_offset_ns}, expected an integer >= 0`);
    const own = shards[r.index]?.shards?.[0];
    if (own && (r.started_unix_ns !== own.started_unix_ns || r.requests !== own.requests)) fail(`merged shards[${r.index}] (began ${r.started_unix_ns}, ${r.requests} requests) differs from its file (began ${own.started_unix_ns}, ${own.requests} requests)`);
    offsets.push(r.start_offset_ns);
  }
  if (offsets.length) {
    const sorted = [...offsets].sort((a, b) => a - b);
    if (sorted[0] !== 0) fail(`the earliest shard's start_offset_ns is ${sorted[0]}, expected 0`);
    if (sorted.at(-1) !== set.start_skew_ns) fail(`the largest start_offset_ns ${sorted.at(-1)} is not shard_set.start_skew_ns ${set.start_skew_ns}`);
    const starts = shards.map((s) => s.shards?.[0]?.started_unix_ns);
    const skew = Math.max(...starts) - Math.min(...starts);
    // started_unix_ns is ~1.8e18: doubles hold it to within 256 ns.
    if (Math.abs(skew - set.start_skew_ns) > 1024) fail(`shard_set.start_skew_ns ${set.start_skew_ns}, the shards' own start instants span ${skew} ns`);
    const us = (ns) => (ns / 1000).toFixed(1);
    const p50 = sorted[Math.floor((sorted.length - 1) / 2)];
    console.log(`shard start skew: p50 ${us(p50)} µs, max ${us(sorted.at(-1))} µs (offsets ${offsets.map(us).join(", ")} µs of shards ${recs.map((r) => r.index).join(", ")}; shard_set.start_skew_ns ${set.start_skew_ns})`);
  }

  // Totals and operations: sums, and every latency histogram re-merged here.
  for (const f of ["requests", "errors"]) {
    const want = sum((s) => s.totals?.[f]);
    if (merged.totals?.[f] !== want) fail(`merged totals.${f} ${merged.totals?.[f]}, the shards' sum ${want}`);
  }
  const ops = new Set([...Object.keys(merged.operations ?? {}), ...shards.flatMap((s) => Object.keys(s.operations ?? {}))]);
  if (ops.size === 0) fail("no operation in the merged result");
  for (const op of ops) {
    const m = merged.operations?.[op];
    if (!m) { fail(`operation ${op} is in a shard but not in the merge`); continue; }
    for (const f of ["count", "errors", "refusals"]) {
      const want = sum((s) => s.operations?.[op]?.[f]);
      if (m[f] !== want) fail(`${op}: merged ${f} ${m[f]}, the shards' sum ${want}`);
    }
    const per = shards.map((s) => s.operations?.[op]);
    checkLatency(`${op} latency`, m.latency, per.map((p) => p?.latency), o.quote.includes(op));
    checkLatency(`${op} latency_uncorrected`, m.latency_uncorrected, per.map((p) => p?.latency_uncorrected), false);
    for (const outcome of Object.keys(m.by_outcome ?? {}))
      checkLatency(`${op} ${outcome}`, m.by_outcome[outcome], per.map((p) => p?.by_outcome?.[outcome]), false);
  }

  if (o.race) {
    for (const [what, r] of [["the merge", merged.race], ...shards.map((s, i) => [shardFiles[i], s.race])]) {
      if (!r) { fail(`${what}: no race section`); continue; }
      if (r.violation_count !== 0) fail(`${what}: race violation_count ${r.violation_count}, expected 0`);
    }
    const rounds = sum((s) => s.race?.rounds);
    if (merged.race?.rounds !== rounds) fail(`merged race.rounds ${merged.race?.rounds}, the shards' sum ${rounds}`);
    if (!(rounds > 0)) fail("the race ran no round");
  }

  // Thresholds: deferred in each shard, judged once on the merge.
  const byExpr = (list, e) => (list ?? []).find((t) => t.expression === e);
  for (const [e, wantHeld] of [...o.held.map((e) => [e, true]), ...(o.breached ? [[o.breached, false]] : [])]) {
    const t = byExpr(merged.thresholds, e);
    if (!t) fail(`the merged thresholds lack ${e} (have: ${(merged.thresholds ?? []).map((x) => x.expression).join(", ")})`);
    else {
      if (t.held !== wantHeld) fail(`merged threshold ${e}: held ${t.held} (${t.description}), expected ${wantHeld}`);
      if (t.deferred !== false) fail(`merged threshold ${e}: deferred ${t.deferred}, expected false (judged on the merge)`);
    }
    shards.forEach((s, i) => {
      const st = byExpr(s.thresholds, e);
      if (!st) fail(`${shardFiles[i]}: no threshold ${e}`);
      else {
        if (st.deferred !== true) fail(`${shardFiles[i]}: threshold ${e} deferred ${st.deferred}, expected true`);
        if (st.held !== true) fail(`${shardFiles[i]}: threshold ${e} alone held ${st.held} (${st.description}), expected true: the shard's part holds`);
      }
    });
  }
  if (o.breached) {
    if (merged.verdict?.status !== "failed" || merged.verdict?.exit_code !== 1) fail(`merged load verdict ${JSON.stringify(merged.verdict)}, expected failed with exit_code 1`);
    const t = byExpr(merged.thresholds, o.breached);
    if (t) console.log(`merged: ${t.description}; shards: ${shards.map((s) => byExpr(s.thresholds, o.breached)?.actual).join(" + ")}`);
  }
}

// ------------------------------------------------------------------- incomplete

function checkIncomplete(mergedFile, o) {
  const run = load(mergedFile);
  const merged = loadOf(run, mergedFile);
  const set = merged.shard_set ?? {};
  if (merged.verdict?.status !== "incomplete") fail(`merged load verdict status ${merged.verdict?.status} (${merged.verdict?.reason}), expected incomplete`);
  if (run.verdict?.exit_code !== 1) fail(`merged run verdict exit_code ${run.verdict?.exit_code}, expected 1`);
  if (set.complete !== false) fail(`shard_set.complete is ${set.complete}, expected false`);
  if (!same(set.missing, o.missing)) fail(`shard_set.missing is ${JSON.stringify(set.missing)}, expected ${JSON.stringify(o.missing)}`);
  if (set.count !== o.count) fail(`shard_set.count is ${set.count}, expected ${o.count}`);
}

// ------------------------------------------------------------------------- main

const [mode, mergedFile, ...rest] = process.argv.slice(2);
const o = { held: [], quote: ["call", "recall", "get-agent"], race: false };
const files = [];
for (let i = 0; i < rest.length; i++) {
  const a = rest[i];
  const value = () => (i + 1 < rest.length ? rest[++i] : usage(`${a} needs a value`));
  if (a === "--run-id") o.runId = value();
  else if (a === "--connections") o.connections = Number(value());
  else if (a === "--rate") o.rate = Number(value());
  else if (a === "--planned-ns") o.plannedNs = Number(value());
  else if (a === "--race") o.race = true;
  else if (a === "--breached") o.breached = value();
  else if (a === "--held") o.held.push(value());
  else if (a === "--count") o.count = Number(value());
  else if (a === "--missing") o.missing = value().split(",").map(Number);
  else if (a.startsWith("--")) usage(`unknown option ${a}`);
  else files.push(a);
}
if (!mergedFile) usage("usage: shard_merge_check.mjs merge MERGED SHARD... | incomplete MERGED --count N --missing I");
if (mode === "merge") {
  if (files.length === 0) usage("merge: no shard files");
  checkMerge(mergedFile, files, o);
} else if (mode === "incomplete") {
  if (o.count === undefined || o.missing === undefined) usage("incomplete: --count and --missing are needed");
  checkIncomplete(mergedFile, o);
} else usage(`unknown mode ${mode}`);
process.exitCode = failures ? 1 : 0;
