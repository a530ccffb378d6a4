# Reads the operation-accuracy.csv of `ndr export` and prints, per model and evaluation, each root
# operation's mean accuracy over the training depths (IID) and over the test depths (Longer), leaving
# out depths where the operation roots no example (as `ndr sweep collect` and the dashboard do).
#   python3 operation_means.py OUT/dashboard/operation-accuracy.csv
import csv, sys, collections
cells = collections.defaultdict(list)  # (model, step, operation, split) -> accuracies per depth
models, steps, operations = [], {}, []
for row in csv.DictReader(open(sys.argv[1])):
    if int(row['examples']) == 0:
        continue
    m, s, op = row['model'], int(row['step']), row['operation']
    if m not in models:
        models.append(m)
    steps.setdefault(m, [])
    if s not in steps[m]:
        steps[m].append(s)
    if op not in operations:
        operations.append(op)
    cells[(m, s, op, row['split'])].append(float(row['accuracy']))
mean = lambda xs: f"{sum(xs) / len(xs):.3f}" if xs else "-"
print("model,step," + ",".join(f"{op} IID,{op} Longer" for op in operations))
for m in models:
    for s in steps[m]:
        print(f"{m},{s}," + ",".join(f"{mean(cells[(m, s, op, 'train')])},{mean(cells[(m, s, op, 'test')])}"
                                      for op in operations))
