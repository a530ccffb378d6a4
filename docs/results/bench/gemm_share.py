# Reads `perf script` output; for samples under SplitStep::forwardBackward (the model's training step,
# not the sgemm reference), the ratio of samples outside Eigen's GEMM (kernel and packing) to samples
# inside it, and with a number N the N leaf symbols outside GEMM with the most samples.
#   perf record -g -o p.data ndr bench --case "d128 NDR" --runs 1 --seconds 6
#   perf script -i p.data | python3 gemm_share.py [N]
import sys, re, collections
gemm = other = 0
leafs = collections.Counter()
block = []
def flush(block):
    global gemm, other
    if len(block) < 2: return
    frames = block[1:]
    if not any('SplitStep::forwardBackward' in f for f in frames): return
    leaf = frames[0]
    if 'gebp_kernel' in leaf or 'gemm_pack' in leaf: gemm += 1
    else:
        other += 1
        m = re.search(r'\s[0-9a-f]+\s+(.*?)\s+\(', leaf)
        leafs[(m.group(1) if m else leaf)[:90]] += 1
for line in sys.stdin:
    if line.strip() == '':
        flush(block); block = []
    else:
        block.append(line.rstrip())
flush(block)
print(f"gemm {gemm} other {other} other/gemm {other/gemm:.4f}")
for k, v in leafs.most_common(int(sys.argv[1]) if len(sys.argv) > 1 else 0):
    print(f"  {v/gemm:.4f} {k}")
