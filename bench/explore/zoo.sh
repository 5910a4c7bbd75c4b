#!/usr/bin/env bash
# The silent-gap zoo (issue 35): `crh contract` with its defaults (exploration
# on) against crh_dialect_server in many combinations of its switches (each a
# correct reading of a point where the spec is silent; `crh_dialect_server
# --list-choices`), each run with the profile that describes it. Every run is
# a correct service, so any run that exits 1 or has a MUST finding is a false
# alarm of the harness.
#
# Each run draws a combination (every value of every switch comes up about
# equally often), a fresh exploration seed (crh draws it; printed), starts the
# server on a free loopback port, writes the profile and runs
#   crh contract --base-url URL [--profile P] --json F --quiet
# or, for a share of the runs (--slow-share), with --slow --minute-ms 300 on
# both sides, so tags end during the run. Profiles come in three kinds:
# full (every field the combination has), lean (the fields DESIGN §3's
# defaults or lenient reading do not already cover) and none (no profile;
# only drawn for a combination whose every profile-relevant choice is the
# default's). A SHOULD finding is not a false alarm (exit 0 stays 0).
#
# usage: bench/explore/zoo.sh [--runs N] [--jobs J] [--slow-share F] [--seed-base S]
#                             [--fixed-seeds] [--keep DIR] [--only NAME=VALUE]...
#                             [--disputed] [--timeout S] [--out DIR]
#   --runs N         runs (default 20)
#   --jobs J         runs at once (default 1; each run is one server and one crh)
#   --slow-share F   share of runs with --slow --minute-ms 300 (default 0.2)
#   --seed-base S    draw the combinations from S (the same S draws the same ones)
#   --fixed-seeds    exploration seed S+i for run i (else crh draws a fresh one)
#   --only N=V[,V]   switch N takes only these values (repeatable)
#   --disputed       also draw the values whose correctness the lead has not ruled
#                    on (tagnames=unique; zoo.py DISPUTED)
#   --timeout S      limit of one crh run in seconds (default 120 quick, 240 slow)
#   --keep DIR       keep every run's profile, result document and outputs there
#   --out DIR        where the table and failures.txt go (default: a temp dir, printed)
# env:   CRH=build/crh  DIALECT=build/tests/crh_dialect_server
# exit:  0 no false alarm; 1 some run failed (exit 1 or a MUST finding);
#        3 no false alarm but some run could not be judged (exit 2/3, timeout)
set -euo pipefail
for a in "$@"; do case $a in -h | --help) sed -n '2,36p' "$0"; exit 0 ;; esac; done
here=$(cd "$(dirname "$0")" && pwd)
CRH=${CRH:-build/crh}
DIALECT=${DIALECT:-build/tests/crh_dialect_server}
command -v python3 >/dev/null || { echo "zoo.sh: python3 is needed" >&2; exit 2; }
[ -x "$CRH" ] || { echo "zoo.sh: no crh at $CRH (set CRH=path/to/crh)" >&2; exit 2; }
[ -x "$DIALECT" ] || { echo "zoo.sh: no crh_dialect_server at $DIALECT (set DIALECT=...)" >&2; exit 2; }
exec python3 "$here/zoo.py" --crh "$CRH" --dialect "$DIALECT" "$@"
