#!/usr/bin/env python3
"""Each thoughtnet run of run.sh measured three ways with `ndr eval`: on the held-out sets the runs
evaluate on (`held-out`), on each problem of the fixed training set once (`training`), and on 500
problems per kind sampled independently of training, as the ThoughtNet write-up sampled its test sets
(`independent`, sample seed 1), with the share of those problems that are training problems.
Usage: protocols.py OUT_DIR NDR_BINARY > protocols.csv"""
import csv, pathlib, subprocess, sys

KINDS = ["1+1", "2+2", "3+3", "1x1", "1x2", "2x2", "4+4", "2x3"]


def table(args):
    """The rows of `ndr eval`'s table by their first cell: the header, each model, `examples` and
    `share` (share in training)."""
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in text.splitlines():
        cells = line.split()
        if cells and not set(line) <= {"-"}:
            rows.setdefault(cells[0], cells)
    header = rows["model"][3:]
    kinds = header[: header.index("IID")]
    return kinds, rows


def main():
    out = csv.writer(sys.stdout)
    out.writerow(["seed", "model", "set"] + KINDS)
    ndr = sys.argv[2]
    for run in sorted(pathlib.Path(sys.argv[1]).glob("thoughtnet-seed*/run.json")):
        seed = run.parent.name.rsplit("-seed", 1)[1]
        for on in ("held-out", "training", "independent"):
            kinds, rows = table([ndr, "eval", str(run), "--on", on])
            for name, cells in rows.items():
                if name in ("model", "most", "examples", "share", "Accuracy") or name.endswith(":"):
                    continue
                values = dict(zip(kinds, cells[3:]))
                out.writerow([seed, name, on] + [values.get(k, "") for k in KINDS])
            if on == "independent":
                values = dict(zip(kinds, rows["share"][-len(kinds):]))
                out.writerow([seed, "share in training", on] + [values.get(k, "") for k in KINDS])


if __name__ == "__main__":
    main()
