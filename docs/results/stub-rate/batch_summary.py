"""Per probe and seed: the first evaluation with the mean accuracy on depths 5-7 at >= 0.99, the
training seconds until then (the run file's elapsedSeconds, evaluations excluded) and ms per step."""
import glob, json, sys

print("probe,batch,ndrRate,seed,firstStepAt0.99,trainSecondsThen,msPerStep,lastTestMean")
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + "/seed-*/run.json")):
        run = json.load(open(f))
        model = run["models"][0]
        first, seconds = "", ""
        for h in model["history"]:
            acc = dict(zip(h["depths"], h["accuracy"]))
            mean = sum(acc[k] for k in (5, 6, 7)) / 3
            if mean >= 0.99 and first == "":
                first, seconds = h["step"], "%.1f" % h["elapsedSeconds"]
        last = model["history"][-1]
        acc = dict(zip(last["depths"], last["accuracy"]))
        print("%s,%d,%g,%s,%s,%s,%.2f,%.4f" % (
            d, run["config"]["train"]["batchSize"], model["config"]["learningRate"],
            f.split("/")[-2][5:], first, seconds, 1000 * last["elapsedSeconds"] / last["step"],
            sum(acc[k] for k in (5, 6, 7)) / 3))
