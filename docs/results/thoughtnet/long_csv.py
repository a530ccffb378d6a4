#!/usr/bin/env python3
"""The accuracy per problem kind at every evaluation of a run of long.json (ThoughtNet alone), and the
training minutes so far (the run file's elapsedSeconds: evaluations excluded).
Usage: long_csv.py RUN.json > long-seedN.csv"""
import csv, json, sys

KINDS = ["1+1", "2+2", "3+3", "1x1", "1x2", "2x2", "4+4", "2x3"]
record = json.load(open(sys.argv[1]))
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["step"] + KINDS + ["training_minutes"])
for e in record["models"][0]["history"]:
    acc = dict(zip(e["depths"], e["accuracy"]))
    out.writerow([e["step"]] + [f"{acc[d]:.3f}" for d in range(1, 9)] + [f'{e["elapsedSeconds"] / 60:.1f}'])
