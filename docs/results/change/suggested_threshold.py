#!/usr/bin/env python3
"""The inspector's halting threshold for a run (ndr::suggestedHaltingThreshold, core/train/halting.h):
halfway from the median to the largest mean gate of the first gated model's latest probe trace,
rounded to 0.005 (halves away from zero, as std::round). Usage: suggested_threshold.py RUN.json"""
import json, math, sys

record = json.load(open(sys.argv[1]))
for model in record["models"]:
    gates = model["history"][-1]["probe"].get("gates") or []
    if not gates:
        continue
    ordered = sorted(gates)
    rest = min(max(ordered[len(ordered) // 2], 0.0), 1.0)
    top = min(max(ordered[-1], rest), 1.0)
    print(f"{min(max(math.floor((rest + 0.5 * (top - rest)) * 200 + 0.5) / 200, 0.005), 0.995):.3f}")
    break
