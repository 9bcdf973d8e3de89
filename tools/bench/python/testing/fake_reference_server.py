"""A stand-in for torch_reference.py --serve in the harness's CI test (runSuite.spec.ts): the same
protocol (referenceProtocol.ts) without torch. Every case has one fp32 input x = [1, 2, 3, 4] and one
output y, whose reference is 2·x; three baselines: one accurate, one broken (far off), one that fails."""
import json
import math
import os
import struct
import sys

MARKER = "@@tilekit-reference "
X = [1.0, 2.0, 3.0, 4.0]
WANT = [2 * x for x in X]


def stats(values):
    return {"maxAbs": max(abs(v) for v in values), "rms": math.sqrt(sum(v * v for v in values) / len(values))}


def timing(ms):
    return {"ms": ms, "msMin": ms * 0.99, "msMax": ms * 1.01, "reps": [ms] * 5, "launchesPerRep": 10}


def prepare(request):
    with open(os.path.join(request["dir"], "x.bin"), "wb") as f:
        f.write(struct.pack("<4f", *X))
    return {
        "inputs": {"generator": f"fake manual_seed({request['inputs']['seed']})", "seed": request["inputs"]["seed"],
                   "tensors": {"x": {"file": "x.bin", "dtype": "fp32", "shape": [4]}}},
        "baselines": {
            "torch-good": {**timing(2.0), "tflops": 1.0, "errors": {"y": {"maxAbs": 1e-6, "rms": 1e-6}}},
            "torch-broken": {**timing(1.0), "tflops": 2.0, "errors": {"y": {"maxAbs": 50.0, "rms": 50.0}}},
            "torch-missing": {"error": "RuntimeError: No available kernel"},
        },
        "reference": {"y": stats(WANT)},
    }


def check(request):
    spec = request["outputs"]["y"]
    with open(os.path.join(request["dir"], spec["file"]), "rb") as f:
        got = struct.unpack("<4f", f.read())
    return {"errors": {"y": stats([g - w for g, w in zip(got, WANT)])}, "reference": {"y": stats(WANT)}}


def main():
    dirs = {}
    print("fake reference server up", flush=True)  # a log line, not a reply
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["cmd"] == "hello":
                reply = {"provenance": {"device": "Fake GPU", "torch": "0", "cuda": "0", "cudnn": "0", "driver": "0",
                                        "smClockMHz": 1, "smClockMaxMHz": 2, "powerLimitW": 3}}
            elif request["cmd"] == "prepare":
                dirs[request["case"]] = request["dir"]
                reply = prepare(request)
            else:
                reply = check({**request, "dir": dirs.pop(request["case"])})
            reply = {"ok": True, **reply}
        except Exception as error:  # the real server answers ok: false too
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        print(MARKER + json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
