# Two `timersim step --format json` outputs, a kernel wheel (A) and its
# wheel:SPEC preset (B): every frame has the same fires, cascades, arms and
# cancels, and every level the same pointer and bucket counts (A's levels,
# B's layout rows). Prints the cascade moves and fires it compared.
import json, sys
def norm(v):
    # the modern view splits a flat bucket index into slot and idx; a
    # wheel:SPEC's events give the queue's placement slot, the flat index
    if isinstance(v, dict):
        v = {k: norm(x) for k, x in v.items()}
        if "idx" in v:
            v["slot"] = v.pop("idx")
        return v
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) and len(a) > 1, (len(a), len(b))
moves = fired = 0
for x, y in zip(a, b):
    for k in ("tick", "jiffies", "fired", "cascaded", "armed", "cancelled"):
        assert norm(x[k]) == y[k], (x["tick"], k, x[k], y[k])
    moves += len(x["cascaded"])
    fired += len(x["fired"])
    lv = [(l["pointer"], l["counts"]) for l in x["levels"]]
    rw = [(r["pointer"], r["counts"]) for r in y["rows"]]
    assert lv == rw, (x["tick"], "levels differ", lv, rw)
print(moves, fired)
