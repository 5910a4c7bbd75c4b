#!/usr/bin/env python3
"""The silent-gap zoo's driver (bench/explore/zoo.sh documents it)."""
import argparse
import concurrent.futures
import json
import math
import os
import random
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# Values not yet ruled correct readings of the spec: drawn only with --disputed
# or --only. (keycase=fold, the profile's database_keys, and again=refused, a
# no-op transition refused, were ruled correct on 2026-11-27.)
DISPUTED = {("tagnames", "unique")}
SLOW_MINUTE_MS = 300
QUICK_MINUTE_MS = 60000


def read_switches(dialect):
    out = subprocess.run([dialect, "--list-choices"], check=True, capture_output=True, text=True).stdout
    switches = []
    for line in out.splitlines():
        head = line.split("\t")[0].split()
        switches.append((head[0], head[1:]))
    return switches


# ---------------------------------------------------------------- combinations

def draw_combinations(switches, runs, rng, only, disputed):
    """Per switch a shuffled list holding each value about equally often."""
    columns = {}
    for name, values in switches:
        allowed = [v for v in values if disputed or (name, v) not in DISPUTED]
        if name in only:
            allowed = only[name]
        column = allowed * math.ceil(runs / len(allowed))
        rng.shuffle(column)
        columns[name] = column[:runs]
    return [{name: columns[name][i] for name, _ in switches} for i in range(runs)]


# The defaults DESIGN §3 assumes, per switch: values a run without a profile
# field for it is still described by. A switch absent here needs no profile field.
NO_PROFILE_OK = {
    "names": {"plain"},
    "state": {"word"},
    "keycase": {"exact"},
    "encoding": {"form", "any"},
    "auth": {"401", "403"},
    "bad": {"400"},
    "full": {"409"},
    "refused": {"403"},
    "method": {"405", "404"},
    "hook": {"calls"},
    "minutes": {"day"},
}


def fits_no_profile(combo):
    return all(combo[k] in ok for k, ok in NO_PROFILE_OK.items())


def force_no_profile(combo, rng, only):
    for k, ok in NO_PROFILE_OK.items():
        choices = sorted(ok & set(only.get(k, ok)))
        if combo[k] not in ok and choices:
            combo[k] = rng.choice(choices)


def profile_for(combo, kind, rng):
    """The profile describing `combo`; lean leaves out what §3 already covers."""
    if kind == "none":
        return None
    lean = kind == "lean"
    p = {}
    enc = combo["encoding"]
    if enc != "any":
        if not (lean and enc == "form"):
            p["encoding"] = enc
    elif not lean:
        p["encoding"] = rng.choice(["form", "json", "query"])
    hook = combo["hook"]
    if hook == "dial":
        p["call_hook"] = {"method": "POST", "path": "/channels/{channel}/alias-numbers/{alias}/dial", "parameter": "from"}
    elif hook == "none":
        p["call_hook"] = False
    elif not lean:
        p["call_hook"] = {"method": "POST", "path": "/channels/{channel}/alias-numbers/{alias}/calls", "parameter": "caller"}
    statuses = {}
    defaults = {"auth": [401, 403], "bad_input": [400], "all_tagged": [409], "call_refused": [403], "wrong_method": [405, 404]}
    chosen = {"auth": combo["auth"], "bad_input": combo["bad"], "all_tagged": combo["full"],
              "call_refused": combo["refused"], "wrong_method": combo["method"]}
    for field, value in chosen.items():
        if not (lean and int(value) in defaults[field]):
            statuses[field] = [int(value)]
    if not lean:
        statuses["not_found"] = [404]
    if statuses:
        p["statuses"] = statuses
    plain = combo["names"] == "plain"
    state_field = "snoozed" if combo["state"] == "bool" else "state" if plain else "status"
    if not plain:
        p["id_fields"] = {"agent": ["uid"], "alias": ["alias_uid"]}
        p["fields"] = {"agent_state": state_field, "alias_tag": "label", "database_value": "data",
                       "alias_expiry": "valid_until", "alias_bound_caller": "holder"}
        if combo["lists"] == "wrapped" and not lean:
            p["lists"] = {"agents": "members", "aliases": "numbers"}
    elif not lean:
        p["id_fields"] = {"agent": ["id"], "alias": ["id"]}
        p["fields"] = {"agent_state": state_field, "alias_tag": "tag", "database_value": "value",
                       "alias_expiry": "expires_at", "alias_bound_caller": "bound_caller"}
        if combo["lists"] == "wrapped":
            p["lists"] = {"agents": "agents", "aliases": "aliases"}
    elif state_field != "state":
        p["fields"] = {"agent_state": state_field}
    if combo["keycase"] == "fold":
        p["database_keys"] = "case-insensitive"
    elif not lean:
        p["database_keys"] = "case-sensitive"
    low, span = {"week": (1, 10080), "day": (1, 1440), "hour": (1, 60), "min5": (5, 1440)}[combo["minutes"]]
    if not (lean and (low, span) == (1, 1440)):
        p["minutes"] = {"min": low, "max": span}
    return p


# ---------------------------------------------------------------- one run

def start_server(args, combo, key_file, minute_ms, log):
    cmd = [args.dialect, "--port", "0", "--api-key-file", key_file, "--minute-ms", str(minute_ms)]
    for name, value in combo.items():
        cmd += ["--choice", f"{name}={value}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    line = proc.stdout.readline()  # "listening on http://127.0.0.1:PORT", or nothing when it failed
    m = re.search(r"listening on (http://\S+)", line)
    if not m:
        proc.kill()
        proc.wait()
        raise RuntimeError("crh_dialect_server did not start: " + " ".join(shlex.quote(c) for c in cmd))
    return proc, m.group(1), cmd


def judge(doc):
    """The MUST findings and the SHOULD count of a result document."""
    musts, shoulds = [], 0
    for check in doc.get("checks", []):
        for f in check.get("findings", []):
            if f.get("severity") == "MUST":
                musts.append({"check": check.get("id"), "rule": f.get("rule"), "text": f.get("text", "")})
            else:
                shoulds += 1
        if check.get("outcome") == "fail" and not any(m["check"] == check.get("id") for m in musts):
            musts.append({"check": check.get("id"), "rule": ",".join(check.get("rules", [])), "text": check.get("message", "")})
    return musts, shoulds


def one_run(args, i, plan, key, work):
    combo, kind, slow, seed = plan["combo"], plan["profile"], plan["slow"], plan["seed"]
    run_dir = os.path.join(work, f"run{i:05d}")
    os.makedirs(run_dir, exist_ok=True)
    key_file = os.path.join(run_dir, "key")
    with open(key_file, "w") as f:
        f.write(key + "\n")
    minute_ms = SLOW_MINUTE_MS if slow else QUICK_MINUTE_MS
    profile = profile_for(combo, kind, random.Random(plan["profile_seed"]))
    prof_path = os.path.join(run_dir, "profile.json")
    if profile is not None:
        with open(prof_path, "w") as f:
            json.dump(profile, f, indent=1)
    result = os.path.join(run_dir, "result.json")
    with open(os.path.join(run_dir, "server.err"), "w") as log:
        started = time.monotonic()
        try:
            proc, url, server_cmd = start_server(args, combo, key_file, minute_ms, log)
        except RuntimeError as e:
            return {"i": i, **plan, "exit": "server", "musts": [], "shoulds": 0, "error": str(e), "secs": 0}
        try:
            cmd = [args.crh, "contract", "--base-url", url, "--json", result, "--quiet"]
            if profile is not None:
                cmd += ["--profile", prof_path]
            if slow:
                cmd += ["--slow", "--minute-ms", str(minute_ms)]
            if seed is not None:
                cmd += ["--seed", str(seed)]
            limit = args.timeout or (240 if slow else 120)
            env = dict(os.environ, CRH_API_KEY=key)
            with open(os.path.join(run_dir, "crh.out"), "w") as out:
                try:
                    code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=limit).returncode
                except subprocess.TimeoutExpired:
                    code = "timeout"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    secs = time.monotonic() - started
    musts, shoulds, drawn, verdict = [], 0, seed, ""
    try:
        with open(result) as f:
            doc = json.load(f)
        musts, shoulds = judge(doc)
        drawn = doc.get("config", {}).get("explore_seed", seed)
        verdict = doc.get("verdict", {}).get("status", "")
    except (OSError, ValueError):
        pass
    rerun_server = " ".join(shlex.quote(c) for c in server_cmd).replace(shlex.quote(key_file), "KEYFILE")
    rerun_crh = ["CRH_API_KEY=$(cat KEYFILE)", args.crh, "contract", "--base-url", "URL"]
    if profile is not None:
        rerun_crh += ["--profile", "PROFILE"]
    if slow:
        rerun_crh += ["--slow", "--minute-ms", str(minute_ms)]
    rerun_crh += ["--seed", str(drawn)]
    return {"i": i, **plan, "exit": code, "verdict": verdict, "musts": musts, "shoulds": shoulds,
            "drawn_seed": drawn, "profile_doc": profile, "secs": secs,
            "rerun": rerun_server + "   # prints URL\n      " + " ".join(rerun_crh), "dir": run_dir}


def outcome(r):
    if r["exit"] == 1 or r["musts"]:
        return "FALSE ALARM"
    if r["exit"] != 0:
        return "ERROR"
    return "ok"


# ---------------------------------------------------------------- report

def table(results, switches):
    lines = [f"{'switch=value':<22} {'runs':>5} {'quick':>5} {'slow':>5} {'false alarms':>12} {'errors':>6}"]
    for name, values in switches:
        for v in values:
            rs = [r for r in results if r["combo"][name] == v]
            if not rs:
                continue
            fa = sum(outcome(r) == "FALSE ALARM" for r in rs)
            er = sum(outcome(r) == "ERROR" for r in rs)
            slow = sum(r["slow"] for r in rs)
            lines.append(f"{name + '=' + v:<22} {len(rs):>5} {len(rs) - slow:>5} {slow:>5} {fa:>12} {er:>6}")
    for kind in ("full", "lean", "none"):
        rs = [r for r in results if r["profile"] == kind]
        fa = sum(outcome(r) == "FALSE ALARM" for r in rs)
        er = sum(outcome(r) == "ERROR" for r in rs)
        slow = sum(r["slow"] for r in rs)
        lines.append(f"{'profile=' + kind:<22} {len(rs):>5} {len(rs) - slow:>5} {slow:>5} {fa:>12} {er:>6}")
    return "\n".join(lines)


def markdown(results, switches):
    """One row per switch: each value's runs and false alarms (README's table)."""
    lines = ["| switch | value: runs (false alarms) |", "|---|---|"]
    for name, values in switches:
        cells = []
        for v in values:
            rs = [r for r in results if r["combo"][name] == v]
            if rs:
                cells.append(f"{v}: {len(rs)} ({sum(outcome(r) == 'FALSE ALARM' for r in rs)})")
        lines.append(f"| {name} | {' · '.join(cells)} |")
    cells = []
    for kind in ("full", "lean", "none"):
        rs = [r for r in results if r["profile"] == kind]
        cells.append(f"{kind}: {len(rs)} ({sum(outcome(r) == 'FALSE ALARM' for r in rs)})")
    lines.append(f"| profile | {' · '.join(cells)} |")
    return "\n".join(lines)


def describe(r):
    combo = " ".join(f"{k}={v}" for k, v in r["combo"].items())
    head = (f"run {r['i']}: {outcome(r)} exit {r['exit']} seed {r.get('drawn_seed')} "
            f"{'slow' if r['slow'] else 'quick'} profile={r['profile']}\n  combination: {combo}\n")
    body = "".join(f"  {m['check']} [{m['rule']}]: {m['text'][:600]}\n" for m in r["musts"][:6])
    if r.get("error"):
        body += f"  {r['error']}\n"
    prof = f"  profile: {json.dumps(r['profile_doc'])}\n" if r.get("profile_doc") is not None else "  profile: none\n"
    return head + body + prof + f"  rerun: {r.get('rerun', '')}\n  kept: {r.get('dir', '')}\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crh", required=True)
    ap.add_argument("--dialect", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--slow-share", type=float, default=0.2)
    ap.add_argument("--seed-base", type=int)
    ap.add_argument("--fixed-seeds", action="store_true")
    ap.add_argument("--keep")
    ap.add_argument("--out")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--disputed", action="store_true")
    ap.add_argument("--timeout", type=int)
    ap.add_argument("--none-share", type=float, default=0.15)
    ap.add_argument("--lean-share", type=float, default=0.3)
    args = ap.parse_args()

    switches = read_switches(args.dialect)
    names = {n: vs for n, vs in switches}
    only = {}
    for o in args.only:
        n, _, vs = o.partition("=")
        values = vs.split(",")
        if n not in names or not all(v in names[n] for v in values):
            sys.exit(f"zoo.sh: --only {o}: no such switch value (crh_dialect_server --list-choices)")
        only[n] = values
    base = args.seed_base if args.seed_base is not None else secrets.randbelow(2**31)
    rng = random.Random(base)
    combos = draw_combinations(switches, args.runs, rng, only, args.disputed)
    plans = []
    slow_every = (1 / args.slow_share) if args.slow_share > 0 else 0
    for i, combo in enumerate(combos):
        roll = rng.random()
        kind = "none" if roll < args.none_share else "lean" if roll < args.none_share + args.lean_share else "full"
        if kind == "none":
            force_no_profile(combo, rng, only)
            if not fits_no_profile(combo):
                kind = "lean"  # an --only that no default covers
        slow = slow_every > 0 and math.floor((i + 1) / slow_every) > math.floor(i / slow_every)
        plans.append({"combo": combo, "profile": kind, "slow": slow, "profile_seed": rng.randrange(2**31),
                      "seed": (base + i) if args.fixed_seeds else None})

    out_dir = args.out or tempfile.mkdtemp(prefix="crh-zoo-")
    os.makedirs(out_dir, exist_ok=True)
    work = args.keep or os.path.join(out_dir, "runs")  # without --keep only failing runs stay
    os.makedirs(work, exist_ok=True)
    key = "zoo-" + secrets.token_hex(12)  # never printed
    print(f"zoo: {args.runs} runs, {args.jobs} at once, seed base {base} "
          f"(--seed-base {base} draws the same combinations), results in {out_dir}", flush=True)
    results, lock = [], threading.Lock()
    failures_path = os.path.join(out_dir, "failures.txt")
    open(failures_path, "w").close()

    def done(r):
        with lock:
            results.append(r)
            o = outcome(r)
            combo = " ".join(f"{k}={v}" for k, v in r["combo"].items())
            print(f"run {r['i']:>5} {o:<11} exit {r['exit']} seed {r.get('drawn_seed')} "
                  f"{'slow ' if r['slow'] else 'quick'} profile={r['profile']:<4} {r['secs']:.0f}s  {combo}", flush=True)
            if o == "ok" and not args.keep:
                shutil.rmtree(r.get("dir", ""), ignore_errors=True)
            if o != "ok":
                for m in r["musts"][:3]:
                    print(f"        {m['check']} [{m['rule']}]: {m['text'][:300]}", flush=True)
                with open(failures_path, "a") as f:
                    f.write(describe(r) + "\n")

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(one_run, args, i, p, key, work) for i, p in enumerate(plans)]
        try:
            for fut in concurrent.futures.as_completed(futures):
                done(fut.result())
        except KeyboardInterrupt:
            for fut in futures:
                fut.cancel()
            print("zoo: interrupted; the table counts the runs that ended", flush=True)

    results.sort(key=lambda r: r["i"])
    text = table(results, switches)
    fa = sum(outcome(r) == "FALSE ALARM" for r in results)
    er = sum(outcome(r) == "ERROR" for r in results)
    slow = sum(r["slow"] for r in results)
    summary = (f"{len(results)} runs ({len(results) - slow} quick, {slow} --slow): {fa} false alarms, "
               f"{er} errors; seed base {base}")
    with open(os.path.join(out_dir, "table.txt"), "w") as f:
        f.write(text + "\n" + summary + "\n")
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(markdown(results, switches) + "\n\n" + summary + "\n")
    with open(os.path.join(out_dir, "runs.json"), "w") as f:
        json.dump([{k: v for k, v in r.items() if k != "profile_doc"} for r in results], f, indent=1)
    print(text)
    print(summary)
    if fa or er:
        print(f"failing runs, their combinations and rerun commands: {failures_path}")
    sys.exit(1 if fa else 3 if er else 0)


if __name__ == "__main__":
    main()
