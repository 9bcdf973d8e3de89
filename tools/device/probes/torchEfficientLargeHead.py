"""Probe (run on the GPU machine beside kernels/fmha-fwd/src/_largeHead.bench.ts, same shapes, same run):
PyTorch SDPA's memory-efficient backend, the only torch backend that runs head dims above 256, on the
large-head-dim forward at B=1 H=32 N=8192 bf16, no mask. Three timings of 10 launches back to back
after 3 warm-up launches; FLOPs counted as 2·b·h·s²·(d + d_v), as the probe counts ours."""
import json, torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

def timed(fn, launches=10):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(True), torch.cuda.Event(True)
    a.record()
    for _ in range(launches): fn()
    b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / launches

b, h, s = 1, 32, 8192
for d, dv in ((384, 384), (512, 512), (576, 512)):
    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, h, s, dv, device="cuda", dtype=torch.bfloat16)
    try:
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            ms = [timed(lambda: F.scaled_dot_product_attention(q, k, v)) for _ in range(3)]
        flops = 2 * b * h * s * s * (d + dv)
        print(json.dumps({"backend": "torch-efficient", "d": d, "dv": dv, "ms": ms, "tflops": [flops / m / 1e9 for m in ms]}), flush=True)
    except Exception as e:
        print(json.dumps({"backend": "torch-efficient", "d": d, "dv": dv, "error": str(e)[:200]}), flush=True)
    del q, k, v; torch.cuda.empty_cache()
