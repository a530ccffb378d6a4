#!/usr/bin/env python3
"""One CSV row per run, rule and model from the output of halting_eval.sh: IID, valid and Longer
accuracy as halting, the same running every step, the mean steps used per depth and the share of
steps saved. Usage: halting_eval_csv.py OUTPUT.txt... > summary.csv"""
import csv, re, sys

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["run", "signal", "threshold", "model", "IID", "valid", "Longer", "saved", "steps per depth",
              "every step per depth"])
for path in sys.argv[1:]:
    rows = {}
    for line in open(path):
        line = line.rstrip("\n")
        command = re.match(r"\$ ndr eval (\S+) --halt-on (\S+) --halt-threshold (\S+)", line)
        if command:
            for r in rows.values():
                out.writerow(r)
            run, signal, threshold = command.groups()
            rows = {}
            continue
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) > 4 and cells[1] in ("final", "best"):
            rows[cells[0]] = [run, signal, threshold, cells[0], cells[-3], cells[-2], cells[-1], "", "", ""]
            continue
        used = re.match(r"(.+): steps used \(.*\):(.*); compute saved (\d+)%", line)
        if used and used.group(1) in rows:
            name = used.group(1)
            rows[name][7] = used.group(3) + "%"
            rows[name][8] = " ".join(x.strip().split(" ")[-1] for x in used.group(2).split(","))
        every = re.match(r"(.+): accuracy running every step:(.*)", line)
        if every and every.group(1) in rows:
            rows[every.group(1)][9] = " ".join(x.strip().split(" ")[-1] for x in every.group(2).split(","))
    for r in rows.values():
        out.writerow(r)
