"""Times the torch reference for every case of a bench suite, on the GPU machine.

usage: python3 torch_reference.py CASES.json RESULT.json

CASES.json is a list of {"name", "op", "params"}; ops: copy, permute, gemm, sdpa_fwd, sdpa_bwd.
RESULT.json maps case name -> {baseline name -> {"ms", "tflops"?, "gbps"?} | {"error"}}.
Timing follows shared/design/BENCHMARKS.md: CUDA events around the call, warm-up first, median of
at least 20 repetitions. A backend that cannot run a case is recorded with its error, not dropped.
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "uint8": torch.uint8,
          "int8": torch.int8, "int32": torch.int32}


def median_ms(fn, warmup=5, reps=25):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def attention_flops(p, backward):
    d_qk, d_v = p["d"], p.get("dv", p["d"])
    sq, sk = p.get("sq", p.get("s")), p.get("sk", p.get("s"))
    flops = 2 * p["b"] * p["h"] * sq * sk * (d_qk + d_v)
    if p.get("causal") and sq == sk:
        flops /= 2
    return flops * (2.5 if backward else 1.0)


def run_copy(p):
    n = p["bytes"]
    x = torch.empty(n, device="cuda", dtype=torch.uint8)
    y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x))
    return {"torch-copy": {"ms": ms, "gbps": 2 * n / ms / 1e6}}


def run_permute(p):
    dt = DTYPES[p["dtype"]]
    shape = [int(s) for s in str(p["shape"]).split("x")]
    perm = [int(s) for s in str(p["perm"]).split(",")]
    x = torch.randn(shape, device="cuda").to(dt) if dt.is_floating_point else torch.zeros(shape, device="cuda", dtype=dt)
    moved = 2 * x.numel() * x.element_size()
    out = {}
    ms = median_ms(lambda: x.permute(perm).contiguous())
    out["torch-contiguous"] = {"ms": ms, "gbps": moved / ms / 1e6}
    y = torch.empty_like(x)
    flat, flat_out = x.view(-1), y.view(-1)
    ms = median_ms(lambda: flat_out.copy_(flat))
    out["torch-copy"] = {"ms": ms, "gbps": moved / ms / 1e6}
    return out


def run_gemm(p):
    dt = DTYPES[p["dtype"]]
    a = torch.randn(p["m"], p["k"], device="cuda", dtype=dt)
    b = torch.randn(p["k"], p["n"], device="cuda", dtype=dt)
    ms = median_ms(lambda: a @ b)
    return {"torch-matmul": {"ms": ms, "tflops": 2 * p["m"] * p["n"] * p["k"] / ms / 1e9}}


def run_sdpa(p, backward):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dt = DTYPES[p["dtype"]]
    sq, sk = p.get("sq", p.get("s")), p.get("sk", p.get("s"))
    hk = p.get("hk", p["h"])
    q = torch.randn(p["b"], p["h"], sq, p["d"], device="cuda", dtype=dt, requires_grad=backward)
    k = torch.randn(p["b"], hk, sk, p["d"], device="cuda", dtype=dt, requires_grad=backward)
    v = torch.randn(p["b"], hk, sk, p.get("dv", p["d"]), device="cuda", dtype=dt, requires_grad=backward)
    extra = {"enable_gqa": True} if hk != p["h"] else {}
    out = {}
    for name, backend in (("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION)):
        try:
            with sdpa_kernel([backend]):
                if backward:
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=bool(p.get("causal")), **extra)
                    g = torch.randn_like(o)
                    ms = median_ms(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True))
                else:
                    ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(p.get("causal")), **extra))
            out[name] = {"ms": ms, "tflops": attention_flops(p, backward) / ms / 1e9}
        except Exception as error:  # recorded, never dropped
            out[name] = {"error": str(error).splitlines()[0][:200] if str(error) else type(error).__name__}
    return out


RUNNERS = {
    "copy": run_copy,
    "permute": run_permute,
    "gemm": run_gemm,
    "sdpa_fwd": lambda p: run_sdpa(p, False),
    "sdpa_bwd": lambda p: run_sdpa(p, True),
}


def main():
    cases_path, result_path = sys.argv[1], sys.argv[2]
    with open(cases_path) as f:
        cases = json.load(f)
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cases": {}}
    for i, case in enumerate(cases):
        try:
            results["cases"][case["name"]] = RUNNERS[case["op"]](case["params"])
        except Exception as error:
            results["cases"][case["name"]] = {"torch": {"error": str(error).splitlines()[0][:200]}}
        print(f"[torch {i + 1}/{len(cases)}] {case['name']}: {json.dumps(results['cases'][case['name']])}", flush=True)
        torch.cuda.empty_cache()
    with open(result_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
