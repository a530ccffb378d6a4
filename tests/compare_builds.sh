#!/usr/bin/env bash
# Whether two builds compute the same: trains every preset for a few evaluations with each `ndr` and
# compares the run files bit for bit (every evaluation, the loss every 10 steps and the probe traces
# with their attention maps and gates), leaving out the fields that measure time. A change that is meant
# to leave the numerics alone (a refactoring, a build change) must print "same" for every preset.
#   bash tests/compare_builds.sh OLD_NDR NEW_NDR [STEPS]
# OLD_NDR and NEW_NDR are `ndr` programs (or wrappers that set LD_LIBRARY_PATH); NDR_ISA in the
# environment picks the engine level both load.
set -euo pipefail
old=$1 new=$2 steps=${3:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for preset in stub stub-routing stub-thought-cost paper-forward paper-backward arith listops thoughtnet; do
    for side in old new; do
        ndr=$old
        [ "$side" = new ] && ndr=$new
        "$ndr" train --preset "$preset" --steps "$steps" --eval-interval $((steps / 2)) --out "$work/$side-$preset" \
            --quiet >"$work/$side-$preset.log" 2>&1 || { echo "$preset: $side failed"; cat "$work/$side-$preset.log"; exit 1; }
    done
    if /usr/bin/python3 - "$work/old-$preset/run.json" "$work/new-$preset/run.json" <<'PY'
import json, re, sys
TIMES = {"elapsedSeconds", "stepsPerSecond"}
differ = []
def walk(a, b, path):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in TIMES:
                continue
            if k not in a or k not in b:
                differ.append(path + "." + k + " (only in one)")
            else:
                walk(a[k], b[k], path + "." + k)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, "%s[%d]" % (path, i))
    elif a != b:
        differ.append(path)
walk(*(json.load(open(f)) for f in sys.argv[1:3]), "")
fields = sorted(set(re.sub(r"\[\d+\]", "[]", d) for d in differ))
if fields:
    print("  %d values differ, in %s" % (len(differ), ", ".join(fields[:8])))
sys.exit(1 if differ else 0)
PY
    then
        echo "$preset: same"
    else
        echo "$preset: DIFFERENT"
        status=1
    fi
done
exit $status
