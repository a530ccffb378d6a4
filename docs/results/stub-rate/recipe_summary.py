"""Per probe and seed: the NDR's dropouts, rate and the run's gradient clip, the first evaluation with
the mean accuracy on depths 5-7 at >= 0.99, and the mean at the last evaluation."""
import glob, json, sys


def test_mean(entry):
    acc = dict(zip(entry["depths"], entry["accuracy"]))
    return sum(acc[k] for k in (5, 6, 7)) / 3


print("probe,dropout,attentionDropout,gateDropout,ndrRate,gradClip,seed,firstStepAt0.99,lastStep,lastTestMean")
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + "/seed-*/run.json")):
        run = json.load(open(f))
        model = run["models"][0]
        c = model["config"]
        first = next((h["step"] for h in model["history"] if test_mean(h) >= 0.99), "")
        last = model["history"][-1]
        print("%s,%g,%g,%g,%g,%g,%s,%s,%d,%.4f" % (
            d, c["dropout"], c["attentionDropout"], c["gateDropout"], c["learningRate"],
            run["config"]["train"]["gradClip"], f.split("/")[-2][5:], first, last["step"], test_mean(last)))
