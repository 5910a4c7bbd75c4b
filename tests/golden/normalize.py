#!/usr/bin/env python3
"""Normalizes one crh output document for the golden comparison (tests/cli/golden_cli_test.sh).

    normalize.py [--capture] FILE > FILE.normalized

FILE is a --json result document (kind contract, load, run or pcap), a --junit
XML file, or a terminal log of `crh pcap check` (any other text file). The
output is text made for a line diff: JSON pretty-printed with one key per line
in the document's own key order (never sorted), XML and text line for line.
A masked part becomes a marker in double braces: {{time}}, {{port}},
{{masked}} (a number), ... (markers that keep JSON and XML well-formed).

What is masked is what differs between two runs of the same command on the same
binary; everything else is kept: every key (the set and the order), check ids,
rule ids, verdicts, statuses, outcomes, booleans, messages and evidence (with
only their varying parts masked), configuration.

Masked everywhere (every string of every document):
  - RFC 3339 instants (started_at, the reference service's expires_at and
    last_used_at in the answers quoted as evidence), also when an evidence
    answer is cut off in the middle of one ("...2026-11-26T0... (519 bytes)").
  - the port of a loopback URL (the embedded service listens on port 0).
  - the run's random wrong API key (crh contract sends it as the "wrong key"
    probe; 32 random characters, learned from its `-H 'Apikey: ...'` curl
    lines and then masked wherever it shows).
  - the run's caller nonce: a contract run draws 4 random digits N and calls
    from +1999N00.. +1999N99 and probes crh-no-such-agent-N and
    crh-probe-absent-N; N is learned from the caller numbers and masked in
    those places only (the two digits after it, the caller's index, stay).
  - the exploration's speed ("N operations/s", explore.sequences).
  - the near-miss key's changed half (auth.near-miss.prefix-equal): 7s and 3s
    derived from the embedded service's random key.
Masked by key in JSON:
  - duration_ms, elapsed_ms (outside "config"): wall time of a run, a check,
    an exchange.
  - environment.* (crh run): host, os, cpus, cpu model, compiler, build type
    (an ASan or TSan build must compare equal to the golden of a release one).
  - binding.race (crh contract): which of the 8 racing callers wins a round is
    the race itself; its call answers ("HTTP 200 ... connected" or "HTTP 403
    ... bound to another caller") are masked to one marker, and so is the
    caller index of its calls (the winner calls again). Any other answer (a
    500, a second winner's body of another shape) stays visible.
Load documents (kind load, and each of a run's "loads"): the counts and
timings of a closed-loop load depend on the machine's speed, so every number
is masked except the configuration ("config"), schema_version, the verdict's
exit_code, thresholds' limits, and counts that a correct target keeps fixed or
that follow from the flags: totals.connections, totals.intended_rate,
race.callers, race.rounds_without_winner, race.violation_count,
history.operations, series_step_s, histogram precision_bits. Also:
  - "series" (one entry per second measured; the count depends on when the
    last answer lands) becomes its first entry, masked, and a marker;
    outages.timeline's "lit" and "down" (spans of time, as many as timing
    gives) become a marker; outages.stretches stay (a correct target has none);
    histogram "buckets" (which buckets exist depends on the latencies) become
    a marker; race.release_path (io_uring where the kernel gives a ring, a
    send loop where it does not, e.g. under a container's seccomp profile)
    becomes a marker.
  - percentile objects: "backed" (ten samples beyond the percentile, i.e. a
    count) is masked, and the keys that exist only for some counts,
    "backing_s" and "note", are dropped. This is the one place where the key
    set is not kept: their presence follows from how many requests the
    machine managed in the measured second, which no setting can fix.
  - a threshold's description keeps its expression, limit and verdict; the
    measured value after the colon is masked.
JUnit: the time= and timestamp= attributes; a load's "N requests, R/s, E
errors" and "N rounds" counts, the mixed history's "N database reads, A
agent states, T tags judged" and a threshold's measured value, as in the
JSON ("V violation(s)" stays: the race's checker finds none on a correct
target); and the string masks above in all text.
--capture: the outputs of `crh pcap check` on a fixed capture file are
deterministic but for the check's own started_at and duration_ms (the
top-level ones: a check's or an exchange's time is the capture's) and the
JUnit time= and timestamp= attributes: only those are masked, no string mask
applies (the callers, instants and ports in the capture are the file's own);
its terminal log is compared as it is.
"""

import json
import re
import sys

MASK = "{{masked}}"

# --- string masks --------------------------------------------------------

EXPLORE_RATE = re.compile(r"\b\d+ operations/s")
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?")
# An instant cut off by an evidence answer's truncation ("... (519 bytes)").
RFC3339_CUT = re.compile(r"\d{4}-[0-9T:.Z-]*(?=\.\.\. \(\d+ bytes\))")
LOOPBACK_PORT = re.compile(r"(?<![\w.])(127\.0\.0\.1|localhost|\[::1\]):\d+")
WRONG_KEY = re.compile(r"-H '[Aa]pikey: ([A-Za-z0-9]{8,})'")
CALLER = re.compile(r"(?:\+|%2B)1999(\d{4})\d{2}\b")
NEAR_MISS = re.compile(r"(\| cut -c1-\d+\)\"')[37]+'")
JUNIT_TIME = re.compile(r'\b(time|timestamp)="[^"]*"')
JUNIT_LOAD_COUNTS = re.compile(r"\b\d+ requests, [\d.]+/s, \d+ errors\b")
# A threshold's line, "errors&lt;1%: 0% (limit 1%, ...) held": the measured value.
JUNIT_THRESHOLD_ACTUAL = re.compile(r"(: )[^ (<]+( \(limit )")
JUNIT_ROUNDS = re.compile(r"\b\d+ rounds\b")
JUNIT_HISTORY_COUNTS = re.compile(r"\b\d+ database reads, \d+ agent states, \d+ tags judged\b")


class Learned:
    """The random tokens of one run, found in its text before masking."""

    def __init__(self, text):
        self.wrong_keys = sorted(set(WRONG_KEY.findall(text)), key=len, reverse=True)
        self.nonces = sorted(set(CALLER.findall(text)))
        pats = []
        for n in self.nonces:
            pats.append(r"(?<=1999)" + n + r"(?=\d{2}\b)")  # +1999NNNNxx, %2B1999NNNNxx
            pats.append(r"(?<=crh-no-such-agent-)" + n + r"\b")
            pats.append(r"(?<=crh-probe-absent-)" + n + r"\b")
        self.nonce_re = re.compile("|".join(pats)) if pats else None

    def mask(self, s):
        s = RFC3339.sub("{{time}}", s)
        s = RFC3339_CUT.sub("{{time}}", s)
        s = LOOPBACK_PORT.sub(r"\1:{{port}}", s)
        for k in self.wrong_keys:
            s = s.replace(k, "{{wrong-key}}")
        if self.nonce_re is not None:
            s = self.nonce_re.sub("{{nonce}}", s)
        s = NEAR_MISS.sub(r"\1{{near-miss}}'", s)
        s = EXPLORE_RATE.sub("{{n}} operations/s", s)
        return s


# --- JSON ----------------------------------------------------------------

TIMING_KEYS = {"duration_ms", "elapsed_ms"}
# Numbers of a load document kept as they are (see the header).
LOAD_KEEP_ANYWHERE = {"schema_version", "limit", "callers", "rounds_without_winner", "violation_count",
                      "series_step_s", "precision_bits"}
LOAD_KEEP_PATHS = {("verdict", "exit_code"), ("totals", "connections"), ("totals", "intended_rate"),
                   ("history", "operations")}
RACE_CALL_ANSWER = re.compile(
    r'^HTTP 200 application/json, \d+ bytes: \{"alias":"[^"]*","caller":"[^"]*","connected":true\}$'
    r'|^HTTP 403 application/json, \d+ bytes: \{"msg":"alias \\"[^"]*\\" is tagged and bound to another caller until \{\{time\}\}"\}$')
RACE_CALLER = re.compile(r"(caller=%2B1999\{\{nonce\}\})\d{2}")


class JsonNormalizer:
    def __init__(self, learned, capture=False):
        self.learned = learned
        self.capture = capture  # only the top-level duration_ms is the check's own time

    def doc(self, v):
        return self.value(v, (), None)

    def value(self, v, path, kind):
        """`path`: keys from the enclosing result document (kind contract, load, run, pcap)."""
        if isinstance(v, dict):
            if isinstance(v.get("kind"), str) and v.get("schema") == "crh.result":
                kind, path = v["kind"], ()
            return self.obj(v, path, kind)
        if isinstance(v, list):
            return [self.value(x, path + (i,), kind) for i, x in enumerate(v)]
        if isinstance(v, str):
            return self.learned.mask(v)
        if isinstance(v, bool) or v is None:
            return v
        # a number
        keys = [p for p in path if isinstance(p, str)]
        if keys and keys[-1] in TIMING_KEYS and "config" not in keys and (not self.capture or len(keys) == 1):
            return MASK
        if kind == "load" and not self.load_number_kept(keys):
            return MASK
        return v

    @staticmethod
    def load_number_kept(keys):
        if not keys or keys[0] in ("config", "target", "tool"):
            return True
        if keys[-1] in LOAD_KEEP_ANYWHERE:
            return True
        return tuple(keys[-2:]) in LOAD_KEEP_PATHS and len(keys) == 2

    def obj(self, v, path, kind):
        out = {}
        keys = [p for p in path if isinstance(p, str)]
        in_percentile = kind == "load" and len(keys) >= 2 and keys[-2] == "percentiles"
        for k, x in v.items():
            p = path + (k,)
            if k == "started_at" and isinstance(x, str):
                out[k] = "{{time}}"
            elif kind == "run" and path == () and k == "environment" and isinstance(x, dict):
                out[k] = {ek: "{{machine}}" for ek in x}
            elif kind == "load" and k == "series" and isinstance(x, list):
                out[k] = ["{{series: one entry per second measured, as many as timing gives; the first:}}"]
                if x:
                    out[k].append(self.value(x[0], p + (0,), kind))
            elif kind == "load" and keys[-1:] == ["timeline"] and k in ("lit", "down") and isinstance(x, list):
                out[k] = "{{outage timeline: its spans depend on timing}}"
            elif kind == "load" and k == "release_path" and isinstance(x, str):
                out[k] = "{{release path: io_uring, or a send loop where the kernel refuses a ring}}"
            elif kind == "load" and k == "buckets" and isinstance(x, list):
                out[k] = "{{histogram buckets}}"
            elif in_percentile and k in ("backing_s", "note"):
                continue  # present only for some counts (see the header)
            elif in_percentile and k == "backed":
                out[k] = MASK
            elif kind == "load" and k == "description" and len(keys) >= 1 and keys[0] == "thresholds":
                out[k] = re.sub(r"^(.*?): .*? \((limit )", r"\1: {{actual}} (\2", self.learned.mask(x), count=1)
            else:
                out[k] = self.value(x, p, kind)
        if kind in ("contract", "run") and out.get("id") == "binding.race" and isinstance(out.get("evidence"), list):
            for e in out["evidence"]:
                if isinstance(e, dict):
                    if isinstance(e.get("answer"), str) and RACE_CALL_ANSWER.match(e["answer"]):
                        e["answer"] = "{{a racing caller: HTTP 200 connected or HTTP 403 bound to another caller}}"
                    if isinstance(e.get("curl"), str):
                        e["curl"] = RACE_CALLER.sub(r"\1{{i}}", e["curl"])
        return out


class NoStringMasks:
    """--capture: the document judged a fixed capture; its strings are kept whole."""

    def mask(self, s):
        return s


def normalize(text, capture=False):
    learned = NoStringMasks() if capture else Learned(text)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        doc = json.loads(text)
        return json.dumps(JsonNormalizer(learned, capture).doc(doc), indent=1, ensure_ascii=False) + "\n"
    if stripped.startswith("<?xml") or stripped.startswith("<testsuites"):
        text = JUNIT_TIME.sub(r'\1="{{masked}}"', text)
        if capture:
            return text
        text = JUNIT_LOAD_COUNTS.sub("{{n}} requests, {{n}}/s, {{n}} errors", text)
        text = JUNIT_THRESHOLD_ACTUAL.sub(r"\1{{actual}}\2", text)
        text = JUNIT_ROUNDS.sub("{{n}} rounds", text)
        text = JUNIT_HISTORY_COUNTS.sub("{{n}} database reads, {{n}} agent states, {{n}} tags judged", text)
    return learned.mask(text)


def main(argv):
    args = argv[1:]
    capture = bool(args) and args[0] == "--capture"
    if capture:
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write("usage: normalize.py [--capture] FILE\n")
        return 2
    with open(args[0], encoding="utf-8") as f:
        text = f.read()
    sys.stdout.write(normalize(text, capture))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
