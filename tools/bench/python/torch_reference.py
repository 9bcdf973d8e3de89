"""Times the torch reference for every case of a bench suite, on the GPU machine.

usage: python3 torch_reference.py CASES.json RESULT.json

CASES.json is a list of {"name", "op", "params"}; ops: copy, permute, gemm, sdpa_fwd, sdpa_bwd, fmha_fwd.
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
    """a @ b with the case's storage (BLAS names: first letter A, second B; t = row-major, n =
    column-major): a column-major operand is the transposed view of a packed row-major tensor, so
    cuBLAS gets the transpose flags, not a copy. Cases without a layout keep the old row-major pair (tt)."""
    dt = DTYPES[p["dtype"]]
    m, n, k = p["m"], p["n"], p["k"]
    layout = p.get("layout", "tt")
    a = torch.randn(m, k, device="cuda", dtype=dt) if layout[0] == "t" else torch.randn(k, m, device="cuda", dtype=dt).t()
    b = torch.randn(k, n, device="cuda", dtype=dt) if layout[1] == "t" else torch.randn(n, k, device="cuda", dtype=dt).t()
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


def fmha_fwd_flops(p):
    """BENCHMARKS.md: sum over sequences of 2*h*sq*sk*(d + dv), halved for causal when sq == sk."""
    d, dv, h = p["d"], p.get("dv", p["d"]), p["h"]
    pairs = list(zip(p["seqlens_q"], p["seqlens_k"])) if "seqlens_q" in p else [(p["sq"], p["sk"])] * p["b"]
    return sum(2 * h * sq * sk * (d + dv) / (2 if p.get("causal") and sq == sk else 1) for sq, sk in pairs)


def save_fmha_case(directory, name, tensors, meta):
    """Raw little-endian 16-bit tensors (<name>.<q|k|v|o>.bin, contiguous in the shapes of meta.json) for ours to compare with."""
    import os
    os.makedirs(directory, exist_ok=True)
    for key, t in tensors.items():
        t.detach().contiguous().view(torch.int16).cpu().numpy().tofile(os.path.join(directory, f"{name}.{key}.bin"))
    with open(os.path.join(directory, f"{name}.meta.json"), "w") as f:
        json.dump(meta, f)


def run_fmha_fwd(p):
    """Suite fmha-fwd: F.scaled_dot_product_attention with each backend alone (flash = FlashAttention-2,
    cudnn, efficient), median of >= 20 CUDA-event timings after warm-up.

    params: b, h, hk (default h: GQA through enable_gqa), sq, sk, d, dv (default d), causal (torch's
    is_causal: top-left aligned, equal to bottom-right only when sq == sk), dtype, layout ("bhsd" or
    "bshd": bshd tensors are made (b, s, h, d) and transposed, so SDPA sees the strides ours does),
    seed. Varlen: seqlens_q / seqlens_k lists (b entries) -> jagged nested tensors (one SDPA call);
    a backend that rejects them is timed again looping over the sequences ("<backend>-looped").
    save: a directory; the flash output (with q, k, v) is written there for ours to compare with.
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dt = DTYPES[p["dtype"]]
    h, hk, d, dv = p["h"], p.get("hk", p["h"]), p["d"], p.get("dv", p["d"])
    causal = bool(p.get("causal"))
    gen = torch.Generator(device="cuda").manual_seed(int(p.get("seed", 0)))
    flops = fmha_fwd_flops(p)
    extra = {"enable_gqa": True} if hk != h else {}
    backends = (("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION),
                ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION))

    def rand(*shape):
        return torch.randn(*shape, device="cuda", dtype=dt, generator=gen)

    def dense(b, heads, s, dim):
        if p.get("layout", "bhsd") == "bshd":
            return rand(b, s, heads, dim).transpose(1, 2)
        return rand(b, heads, s, dim)

    out = {}
    if "seqlens_q" in p:
        lq, lk = p["seqlens_q"], p["seqlens_k"]
        qs = [rand(s, h, d) for s in lq]
        ks = [rand(s, hk, d) for s in lk]
        vs = [rand(s, hk, dv) for s in lk]

        def nested(parts):
            return torch.nested.nested_tensor(parts, layout=torch.jagged).transpose(1, 2)
        qn, kn, vn = nested(qs), nested(ks), nested(vs)
        looped_inputs = [(qi.transpose(0, 1).unsqueeze(0), ki.transpose(0, 1).unsqueeze(0), vi.transpose(0, 1).unsqueeze(0))
                         for qi, ki, vi in zip(qs, ks, vs)]
        for name, backend in backends:
            try:
                with sdpa_kernel([backend]):
                    ms = median_ms(lambda: F.scaled_dot_product_attention(qn, kn, vn, is_causal=causal, **extra))
                out[name] = {"ms": ms, "tflops": flops / ms / 1e9}
            except Exception as error:  # recorded, never dropped
                out[name] = {"error": first_line(error)}
                try:
                    with sdpa_kernel([backend]):
                        ms = median_ms(lambda: [F.scaled_dot_product_attention(qi, ki, vi, is_causal=causal, **extra)
                                                for qi, ki, vi in looped_inputs])
                    out[name + "-looped"] = {"ms": ms, "tflops": flops / ms / 1e9}
                except Exception as looped_error:
                    out[name + "-looped"] = {"error": first_line(looped_error)}
        if p.get("save"):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                o = torch.cat([F.scaled_dot_product_attention(qi, ki, vi, is_causal=causal, **extra)[0].transpose(0, 1)
                               for qi, ki, vi in looped_inputs])
            save_fmha_case(p["save"], p.get("name", "case"), {"q": torch.cat(qs), "k": torch.cat(ks), "v": torch.cat(vs), "o": o},
                           {**p, "layout": "thd", "note": "rows of all sequences stacked: (total, heads, dim)"})
        return out
    b, sq, sk = p["b"], p["sq"], p["sk"]
    q, k, v = dense(b, h, sq, d), dense(b, hk, sk, d), dense(b, hk, sk, dv)
    for name, backend in backends:
        try:
            with sdpa_kernel([backend]):
                ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra), warmup=5, reps=30)
            out[name] = {"ms": ms, "tflops": flops / ms / 1e9}
        except Exception as error:  # recorded, never dropped
            out[name] = {"error": first_line(error)}
    if p.get("save"):
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)
        save_fmha_case(p["save"], p.get("name", "case"), {"q": q, "k": k, "v": v, "o": o}, {**p, "layout": "bhsd"})
    return out


def first_line(error):
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__


def run_sdpa_bwd(p):
    """Suite fmha-bwd: the backward of F.scaled_dot_product_attention with each backend alone. Only
    the backward is timed: the output is computed once, then torch.autograd.grad(o, (q, k, v), g)
    (retain_graph) is timed (it runs the backend's dot_do_o/dq_dk_dv/convert kernels).
    Varlen: "seqlens" (q = k per sequence) -> one dense SDPA per sequence, their backward timed
    together (one autograd.grad over all outputs). FLOPs: 2.5 x the forward's (BENCHMARKS.md)."""
    if "seqlens" not in p:
        return run_sdpa(p, True)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dt = DTYPES[p["dtype"]]
    h, hk, d, dv = p["h"], p.get("hk", p["h"]), p["d"], p.get("dv", p["d"])
    causal = bool(p.get("causal"))
    extra = {"enable_gqa": True} if hk != h else {}
    flops = 2.5 * sum(2 * h * s * s * (d + dv) / (2 if causal else 1) for s in p["seqlens"])
    out = {}
    for name, backend in (("torch-flash", SDPBackend.FLASH_ATTENTION), ("torch-cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION)):
        try:
            inputs, outputs, grads = [], [], []
            with sdpa_kernel([backend]):
                for s in p["seqlens"]:
                    q = torch.randn(1, h, s, d, device="cuda", dtype=dt, requires_grad=True)
                    k = torch.randn(1, hk, s, d, device="cuda", dtype=dt, requires_grad=True)
                    v = torch.randn(1, hk, s, dv, device="cuda", dtype=dt, requires_grad=True)
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)
                    inputs += [q, k, v]
                    outputs.append(o)
                    grads.append(torch.randn_like(o))
                ms = median_ms(lambda: torch.autograd.grad(outputs, inputs, grads, retain_graph=True))
            out[name + "-looped"] = {"ms": ms, "tflops": flops / ms / 1e9}
        except Exception as error:  # recorded, never dropped
            out[name + "-looped"] = {"error": first_line(error)}
    return out


RUNNERS = {
    "copy": run_copy,
    "permute": run_permute,
    "gemm": run_gemm,
    "sdpa_fwd": lambda p: run_sdpa(p, False),
    "sdpa_bwd": run_sdpa_bwd,
    "fmha_fwd": run_fmha_fwd,
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
