"""The torch reference server of the bench harness (issue 16), run on the GPU machine.

usage: python3 torch_reference.py --serve

The node harness (tools/bench/src/referenceClient.ts) writes one JSON request per line on stdin;
each is answered with exactly one stdout line, REPLY_MARKER followed by the JSON reply ({"ok": false,
"error": ...} when the request fails; the server keeps serving). Everything else goes to stderr. The
server exits at EOF. The wire types and the timing scheme are tools/bench/src/referenceProtocol.ts;
the ops (inputs, outputs, baselines, figures of merit) are tools/bench/REFERENCE_OPS.md.

  hello    -> {"provenance": device, torch/CUDA/cuDNN versions, driver, SM clocks, power limit}
  prepare  -> makes or reads the case's inputs, computes the fp32 reference (kept on the device until
              check), times and measures every torch baseline
  check    -> measures our outputs' error against the reference (sparge: the reference of the same
              sparse computation, built from our block map), then frees the case

JSON has no Infinity: an infinite number is written as 1e999 (JSON.parse reads it as Infinity), NaN
as null. TILEKIT_REFERENCE_DEVICE=cpu runs everything on the CPU (tests on tiny shapes; the SDPA
backends then record their errors and timings use the host clock).
"""
import contextlib
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback
from typing import Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F

REPLY_MARKER = "@@tilekit-reference "
DEVICE = os.environ.get("TILEKIT_REFERENCE_DEVICE", "cuda")
ON_GPU = DEVICE.startswith("cuda")
# referenceProtocol.ts: FLUSH_BYTES, SHORT_CASE_MS. On the CPU (tests) a small flush keeps runs short.
FLUSH_BYTES = (256 << 20) if ON_GPU else (8 << 20)
SHORT_CASE_MS = 0.1
# A baseline whose first call takes longer is recorded with that as its error instead of being timed
# back to back (its repetitions would take many minutes and end the device call before the case does).
SLOW_CALL_S = 20.0
DEFAULT_TIMING = {"warmup": 3, "warmupMs": 250, "repetitions": 5, "targetMs": 20, "minLaunches": 10, "maxLaunches": 2000, "flushL2": False}
MAX_SPREAD = 0.05  # the node side's timing/measureLaunches rule
MAX_RERUNS = 2
# Elements of one fp32 score block (rows x keys) of the chunked references: 256 MiB.
SCORE_ELEMENTS = 1 << 26
# Elements per chunk of the fp64 error sums.
ERROR_CHUNK = 1 << 25
LOG2E = math.log2(math.e)
FP32_MAX = float(torch.finfo(torch.float32).max)
_INF_TOKEN = "@@inf@@"

# name -> (torch dtype, same-size torch dtype to move raw bytes, numpy dtype of those raw bytes)
DTYPES = {
    "fp16": (torch.float16, torch.int16, np.int16),
    "bf16": (torch.bfloat16, torch.int16, np.int16),
    "fp32": (torch.float32, torch.int32, np.int32),
    "int8": (torch.int8, torch.int8, np.int8),
    "uint8": (torch.uint8, torch.uint8, np.uint8),
    "int32": (torch.int32, torch.int32, np.int32),
}

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")


def log(message):
    print(f"[reference] {message}", file=sys.stderr, flush=True)


def describe(error):
    """The first line of an exception, with its type."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300]}" if text else type(error).__name__


def free_memory():
    if ON_GPU:
        torch.cuda.empty_cache()


# ---------------------------------------------------------------------------------------------
# Tensor files (raw little-endian, C-contiguous)

def torch_dtype(name):
    if name not in DTYPES:
        raise ValueError(f"unknown dtype {name!r} (one of {', '.join(DTYPES)})")
    return DTYPES[name][0]


def dtype_name(dtype):
    return next(name for name, (t, _, _) in DTYPES.items() if t == dtype)


def write_tensor(directory, name, tensor):
    """Writes `<name>.bin` and returns its TensorFile."""
    assert sys.byteorder == "little"
    file = f"{name}.bin"
    raw = tensor.detach().contiguous().view(DTYPES[dtype_name(tensor.dtype)][1])
    raw.cpu().numpy().tofile(os.path.join(directory, file))
    return {"file": file, "dtype": dtype_name(tensor.dtype), "shape": list(tensor.shape)}


def read_tensor(directory, spec):
    """A TensorFile ({file, dtype, shape}) of `directory` as a tensor on DEVICE."""
    dtype = torch_dtype(spec["dtype"])
    raw_numpy = DTYPES[spec["dtype"]][2]
    shape = [int(n) for n in spec["shape"]]
    raw = np.fromfile(os.path.join(directory, spec["file"]), dtype=raw_numpy)
    if raw.size != math.prod(shape):
        raise ValueError(f"{spec['file']}: {raw.size} {spec['dtype']} elements, shape {shape} needs {math.prod(shape)}")
    return torch.from_numpy(raw).view(dtype).reshape(shape).to(DEVICE)


# ---------------------------------------------------------------------------------------------
# Errors and reference sizes (REFERENCE_OPS.md), in fp64 over chunks

def _flat_chunks(*tensors):
    flats = [t.contiguous().reshape(-1) for t in tensors]
    for start in range(0, flats[0].numel(), ERROR_CHUNK):
        yield [f[start:start + ERROR_CHUNK].double() for f in flats]


def unmask(g, w):
    """A chunk of got and want with want's −∞ (masked elements) set to 0 in both; None when got is not
    −∞ at every one of them. Raises for NaN or +∞ in want."""
    if bool(torch.isnan(w).any()) or bool((w == math.inf).any()):
        raise ValueError("the reference holds NaN or +inf")
    masked = w == -math.inf
    if not bool(masked.any()):
        return g, w
    if g is not None and not bool((g[masked] == -math.inf).all()):
        return None
    return (None if g is None else g.masked_fill(masked, 0.0)), w.masked_fill(masked, 0.0)


def error_stats(got, want, excuse=None):
    """maxAbs = max |got - want|, rms = sqrt(mean((got - want)^2)); NaN/Inf in got makes both Infinity.
    A −∞ in want marks a masked element (DSA logits outside a window): got must be −∞ there too (else
    both are Infinity) and the element counts as 0.
    excuse (want's shape, >= 0): how far an element may differ for a reason the reference cannot
    decide (Sparge: a PV-skip vote within rounding of its threshold); it is taken off |got - want|."""
    if tuple(got.shape) != tuple(want.shape):
        raise ValueError(f"output shape {list(got.shape)} is not the reference's {list(want.shape)}")
    n = want.numel()
    max_abs = torch.zeros((), dtype=torch.float64, device=want.device)
    squares = torch.zeros((), dtype=torch.float64, device=want.device)
    for g, w, *e in _flat_chunks(got, want, *([] if excuse is None else [excuse])):
        unmasked = unmask(g, w)
        if unmasked is None:
            return {"maxAbs": math.inf, "rms": math.inf}
        g, w = unmasked
        if not bool(torch.isfinite(g).all()):
            return {"maxAbs": math.inf, "rms": math.inf}
        diff = g.sub_(w).abs_()
        if e:
            diff = diff.sub_(e[0]).clamp_(min=0)
        max_abs = torch.maximum(max_abs, diff.max())
        squares += diff.square_().sum()
    return {"maxAbs": float(max_abs), "rms": math.sqrt(float(squares) / n) if n else 0.0}


def reference_stats(want):
    """maxAbs = max |want|, rms = sqrt(mean(want^2)); a −∞ (masked) element counts as 0."""
    n = want.numel()
    max_abs, squares = 0.0, 0.0
    for (w,) in _flat_chunks(want):
        w = unmask(None, w)[1]
        max_abs = max(max_abs, float(w.abs().max()))
        squares += float(w.square().sum())
    return {"maxAbs": max_abs, "rms": math.sqrt(squares / n) if n else 0.0}


# ---------------------------------------------------------------------------------------------
# Timing (referenceProtocol.ts TimingPlan: the scheme of @tilekit/runtime's timeBackToBack)

_flush_buffer = None


def flush_buffer():
    global _flush_buffer
    if _flush_buffer is None:
        _flush_buffer = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device=DEVICE)
    return _flush_buffer


def timed_batch(count, body):
    """Milliseconds of `count` calls of body back to back (between two CUDA events on the GPU)."""
    if not ON_GPU:
        start = time.perf_counter()
        for _ in range(count):
            body()
        return (time.perf_counter() - start) * 1e3
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(count):
        body()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop)


def time_back_to_back(call, plan, flush=False):
    """warmup calls; one calibration call (t) sets launchesPerRep = clamp(ceil(targetMs / t), min,
    max) and the clock warm-up, ceil(warmupMs / t) more calls (capped at maxLaunches); then
    `repetitions` batches of launchesPerRep calls, each divided by launchesPerRep. With flush every
    call is preceded by zeroing FLUSH_BYTES, and the same number of zeroings alone is subtracted."""
    scratch = flush_buffer() if flush else None
    step = call if scratch is None else (lambda: (scratch.zero_(), call()))
    for _ in range(int(plan["warmup"])):
        step()
    once = max(timed_batch(1, step), 1e-4)
    launches = min(int(plan["maxLaunches"]), max(int(plan["minLaunches"]), math.ceil(plan["targetMs"] / once)))
    timed_batch(min(int(plan["maxLaunches"]), math.ceil(float(plan.get("warmupMs", 0)) / once)), step)
    reps = []
    for _ in range(int(plan["repetitions"])):
        total = timed_batch(launches, step)
        if scratch is not None:
            total -= timed_batch(launches, scratch.zero_)
        reps.append(max(total, 0.0) / launches)
    return {"ms": statistics.median(reps), "msMin": min(reps), "msMax": max(reps), "reps": reps, "launchesPerRep": launches}


def tightest(time_once):
    """Re-times while (max − min) / median exceeds MAX_SPREAD, at most MAX_RERUNS times; keeps the
    tightest timing and counts the re-runs (the rule of the node side's measureLaunches)."""
    best, reruns = time_once(), 0
    while spread(best) > MAX_SPREAD and reruns < MAX_RERUNS:
        again = time_once()
        reruns += 1
        if spread(again) < spread(best):
            best = again
    return {**best, "reruns": reruns}


def spread(t):
    return (t["msMax"] - t["msMin"]) / t["ms"] if t["ms"] > 0 else 0.0


def timing_plan(request):
    plan = dict(DEFAULT_TIMING)
    plan.update(request.get("timing") or {})
    if int(plan["repetitions"]) < 1 or int(plan["minLaunches"]) < 1 or int(plan["maxLaunches"]) < int(plan["minLaunches"]):
        raise ValueError(f"bad timing plan {plan}")
    return plan


# ---------------------------------------------------------------------------------------------
# Baselines: each is tried in its forms until one runs; an error is recorded, never dropped

@dataclasses.dataclass
class Attempt:
    """setup() -> (call, outputs): the timed callable and the outputs of one call (named as the
    reference's, in its shapes). `context` is entered around setup and timing (e.g. an SDPA backend)."""
    setup: Callable
    form: Optional[str] = None
    context: Callable = contextlib.nullcontext


class SlowBaseline(RuntimeError):
    """A baseline too slow to time back to back within one device call."""


def measure(attempt, references, plan, figure):
    with attempt.context():
        started = time.perf_counter()
        call, outputs = attempt.setup()
        if ON_GPU:
            torch.cuda.synchronize()
        first_call_s = time.perf_counter() - started
        if first_call_s > SLOW_CALL_S:
            raise SlowBaseline(f"its first call took {first_call_s:.1f} s (more than {SLOW_CALL_S:.0f} s): not timed")
        errors = {name: error_stats(t, references[name]) for name, t in outputs.items()}
        del outputs
        result = tightest(lambda: time_back_to_back(call, plan))
        if plan["flushL2"] or result["ms"] < SHORT_CASE_MS:
            result["flushed"] = tightest(lambda: time_back_to_back(call, plan, flush=True))
    if result["ms"] > 0:
        result.update(figure(result["ms"]))
    result["errors"] = errors
    if attempt.form:
        result["form"] = attempt.form
    return result


def run_baseline(name, attempts, references, plan, figure):
    """The first attempt that runs, measured; else {"error": the first attempt's error}."""
    first_error = None
    for attempt in attempts:
        try:
            result = measure(attempt, references, plan, figure)
            log(f"  {name}{' (' + attempt.form + ')' if attempt.form else ''}: {result['ms']:.4f} ms "
                f"[{result['msMin']:.4f}, {result['msMax']:.4f}] x{result['launchesPerRep']}")
            return result
        except Exception as error:  # recorded, never dropped
            first_error = first_error or describe(error)
            log(f"  {name}{' (' + attempt.form + ')' if attempt.form else ''}: {describe(error)}")
        finally:
            free_memory()
    return {"error": first_error}


def tflops_figure(flops):
    return lambda ms: {"tflops": flops / ms / 1e9}


def gbps_figure(moved_bytes):
    return lambda ms: {"gbps": moved_bytes / ms / 1e6}


# ---------------------------------------------------------------------------------------------
# Parameters

def int_list(value, sep=","):
    """[1, 2], "1,2" (or "1x2" with sep="x") -> [1, 2]."""
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(v) for v in str(value).split(sep) if v.strip()]


# ---------------------------------------------------------------------------------------------
# Attention: shapes, layouts, the chunked fp32 reference

@dataclasses.dataclass
class Attention:
    """An attention problem of attention_fwd / attention_bwd / sparge params."""
    dtype: torch.dtype
    b: int
    h: int
    hk: int
    d: int
    dv: int
    causal: bool
    scale: float
    scale_given: bool
    layout: str  # bhsd, bshd or varlen
    seqs: list  # (sq, sk) per sequence

    @staticmethod
    def of(p):
        if "seqlens" in p:
            lq = lk = int_list(p["seqlens"])
        elif "seqlens_q" in p:
            lq, lk = int_list(p["seqlens_q"]), int_list(p["seqlens_k"])
        else:
            sq = int(p["sq"] if "sq" in p else p["s"])
            sk = int(p["sk"] if "sk" in p else p.get("s", sq))
            lq, lk = [sq] * int(p["b"]), [sk] * int(p["b"])
        if len(lq) != len(lk) or ("b" in p and int(p["b"]) != len(lq)):
            raise ValueError(f"b = {p.get('b')}, {len(lq)} query and {len(lk)} key lengths")
        varlen = "seqlens" in p or "seqlens_q" in p
        h, d = int(p["h"]), int(p["d"])
        hk = int(p.get("hk") or h)
        if h % hk:
            raise ValueError(f"h = {h} is not a multiple of hk = {hk}")
        scale = p.get("scale")
        layout = "varlen" if varlen else str(p.get("layout") or "bhsd")
        if layout not in ("bhsd", "bshd", "varlen"):
            raise ValueError(f"unknown layout {layout!r}")
        return Attention(dtype=torch_dtype(p["dtype"]), b=len(lq), h=h, hk=hk, d=d, dv=int(p.get("dv") or d),
                         causal=bool(p.get("causal")), scale=float(scale) if scale is not None else 1 / math.sqrt(d),
                         scale_given=scale is not None, layout=layout, seqs=list(zip(lq, lk)))

    @property
    def group(self):
        return self.h // self.hk

    def shape(self, heads, dim, side):
        """The file shape of a q-side ('q') or k-side ('k') tensor with `heads` heads of `dim`."""
        lengths = [s[0] if side == "q" else s[1] for s in self.seqs]
        if self.layout == "varlen":
            return [sum(lengths), heads, dim]
        s = lengths[0]
        return [self.b, heads, s, dim] if self.layout == "bhsd" else [self.b, s, heads, dim]

    def shapes(self):
        return {"q": self.shape(self.h, self.d, "q"), "k": self.shape(self.hk, self.d, "k"),
                "v": self.shape(self.hk, self.dv, "k"), "o": self.shape(self.h, self.dv, "q")}

    def starts(self, side):
        lengths = [s[0] if side == "q" else s[1] for s in self.seqs]
        return [sum(lengths[:i]) for i in range(len(lengths) + 1)]

    def views(self, x, side):
        """Per sequence, the (heads, s, dim) view of a tensor in this layout."""
        if self.layout == "bhsd":
            return [x[i] for i in range(self.b)]
        if self.layout == "bshd":
            return [x[i].transpose(0, 1) for i in range(self.b)]
        starts = self.starts(side)
        return [x[starts[i]:starts[i + 1]].transpose(0, 1) for i in range(self.b)]

    def to_bhsd(self, x):
        return x.transpose(1, 2) if self.layout == "bshd" else x

    def flops(self):
        """docs/benchmarks.md forward count: sum over sequences of 2·h·sq·sk·(d + dv), halved for causal when sq = sk."""
        return sum(2 * self.h * sq * sk * (self.d + self.dv) / (2 if self.causal and sq == sk else 1) for sq, sk in self.seqs)


def causal_mask(sq, sk, top_left=False):
    """mask_fn of attention_rows: key j is kept for row r iff j <= r + (sk - sq) (bottom-right), or j <= r (top-left)."""
    offset = 0 if top_left else sk - sq

    def mask(r0, r1):
        rows = torch.arange(r0, r1, device=DEVICE)[:, None] + offset
        return torch.arange(sk, device=DEVICE)[None, :] <= rows
    return mask


def masked_probs(s, mask):
    """Softmax over the last dim of the scores s (in place), restricted to mask; a row without keys is 0."""
    if mask is not None:
        s.masked_fill_(~mask, -math.inf)
    row_max = s.amax(-1, keepdim=True).nan_to_num_(neginf=0.0)
    p = s.sub_(row_max).exp_()
    # l >= 1 when the row keeps a key (its max contributes 1), 0 otherwise.
    return p.div_(p.sum(-1, keepdim=True).clamp_min_(1.0))


def row_chunk(width):
    return max(1, SCORE_ELEMENTS // max(1, width))


def attention_rows(q, k, v, scale, mask_fn):
    """fp32 softmax(scale·q·kᵀ restricted to mask_fn(r0, r1))·v of q (G, sq, d) against one head's
    k (sk, d), v (sk, dv); chunked over query rows. Returns (G, sq, dv)."""
    g, sq, _ = q.shape
    sk = k.shape[0]
    out = torch.zeros((g, sq, v.shape[-1]), dtype=torch.float32, device=q.device)
    if sq == 0 or sk == 0:
        return out
    kf, vf = k.float(), v.float()
    rows = row_chunk(g * sk)
    for r0 in range(0, sq, rows):
        r1 = min(sq, r0 + rows)
        s = torch.matmul(q[:, r0:r1].float(), kf.t()).mul_(scale)
        out[:, r0:r1] = torch.matmul(masked_probs(s, None if mask_fn is None else mask_fn(r0, r1)), vf)
    return out


def attention_rows_backward(q, k, v, do, scale, mask_fn):
    """fp32 dq (G, sq, d), dk (sk, d), dv (sk, dv) of attention_rows: P = softmax, O = P·V,
    dS = P∘(dO·Vᵀ − rowsum(dO∘O)), dQ = scale·dS·K, dK = scale·dSᵀ·Q, dV = Pᵀ·dO (summed over G)."""
    g, sq, d = q.shape
    sk, dv = k.shape[0], v.shape[-1]
    dq = torch.zeros((g, sq, d), dtype=torch.float32, device=q.device)
    dk = torch.zeros((sk, d), dtype=torch.float32, device=q.device)
    dvv = torch.zeros((sk, dv), dtype=torch.float32, device=q.device)
    if sq == 0 or sk == 0:
        return dq, dk, dvv
    kf, vf = k.float(), v.float()
    rows = row_chunk(g * sk)
    for r0 in range(0, sq, rows):
        r1 = min(sq, r0 + rows)
        qc, doc = q[:, r0:r1].float(), do[:, r0:r1].float()
        p = masked_probs(torch.matmul(qc, kf.t()).mul_(scale), None if mask_fn is None else mask_fn(r0, r1))
        delta = (doc * torch.matmul(p, vf)).sum(-1, keepdim=True)
        ds = torch.matmul(doc, vf.t()).sub_(delta).mul_(p)
        dq[:, r0:r1] = torch.matmul(ds, kf).mul_(scale)
        dk += torch.matmul(ds.reshape(-1, sk).t(), qc.reshape(-1, d)).mul_(scale)
        dvv += torch.matmul(p.reshape(-1, sk).t(), doc.reshape(-1, dv))
    return dq, dk, dvv


def attention_reference(a, x):
    """The fp32 O (q's layout, dv columns) of an Attention on inputs x (q, k, v)."""
    o = torch.zeros(a.shapes()["o"], dtype=torch.float32, device=DEVICE)
    for qi, ki, vi, oi, (sq, sk) in zip(a.views(x["q"], "q"), a.views(x["k"], "k"), a.views(x["v"], "k"), a.views(o, "q"), a.seqs):
        mask = causal_mask(sq, sk) if a.causal else None
        for kvh in range(a.hk):
            heads = slice(kvh * a.group, (kvh + 1) * a.group)
            oi[heads] = attention_rows(qi[heads], ki[kvh], vi[kvh], a.scale, mask)
    return {"o": o}


def attention_bwd_reference(a, x):
    """The fp32 dq, dk, dv (the inputs' shapes) of an Attention on inputs x (q, k, v, do)."""
    grads = {name: torch.zeros(x[src].shape, dtype=torch.float32, device=DEVICE) for name, src in (("dq", "q"), ("dk", "k"), ("dv", "v"))}
    per_seq = zip(a.views(x["q"], "q"), a.views(x["k"], "k"), a.views(x["v"], "k"), a.views(x["do"], "q"),
                  a.views(grads["dq"], "q"), a.views(grads["dk"], "k"), a.views(grads["dv"], "k"), a.seqs)
    for qi, ki, vi, doi, dqi, dki, dvi, (sq, sk) in per_seq:
        mask = causal_mask(sq, sk) if a.causal else None
        for kvh in range(a.hk):
            heads = slice(kvh * a.group, (kvh + 1) * a.group)
            dqi[heads], dki[kvh], dvi[kvh] = attention_rows_backward(qi[heads], ki[kvh], vi[kvh], doi[heads], a.scale, mask)
    return grads


# ---------------------------------------------------------------------------------------------
# Attention baselines: F.scaled_dot_product_attention with one backend at a time

SDPA_BACKENDS = (("torch-flash", "FLASH_ATTENTION"), ("torch-cudnn", "CUDNN_ATTENTION"), ("torch-efficient", "EFFICIENT_ATTENTION"))
GQA_REPEAT_FORM = "K/V heads repeated for GQA (repeat_interleave inside the timed call)"


def sdpa_context(backend):
    def context():
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel([getattr(SDPBackend, backend)])
    return context


def sdpa(a, q, k, v, gqa):
    """SDPA on (b, heads, s, dim) tensors (or jagged nested ones); GQA through enable_gqa ('native') or by repeating K/V heads."""
    kwargs = {"is_causal": a.causal}
    if a.scale_given:
        kwargs["scale"] = a.scale
    if a.hk != a.h:
        if gqa == "native":
            kwargs["enable_gqa"] = True
        else:
            k, v = k.repeat_interleave(a.group, dim=1), v.repeat_interleave(a.group, dim=1)
    return F.scaled_dot_product_attention(q, k, v, **kwargs)


def gqa_forms(a):
    return [("native", None)] if a.hk == a.h else [("native", None), ("repeat", GQA_REPEAT_FORM)]


def jagged(packed, offsets):
    """A (Σs, heads, dim) tensor as the (b, heads, j, dim) jagged nested tensor (a view)."""
    return torch.nested.nested_tensor_from_jagged(packed, offsets).transpose(1, 2)


def offsets_of(a):
    """The jagged offsets of q and of k (the same tensor when the lengths agree, so the ragged dims match)."""
    oq = torch.tensor(a.starts("q"), dtype=torch.int64, device=DEVICE)
    ok = oq if a.starts("k") == a.starts("q") else torch.tensor(a.starts("k"), dtype=torch.int64, device=DEVICE)
    return oq, ok


def looped_parts(a, tensors, sides):
    """Per non-empty sequence, its (1, heads, s, dim) views of each tensor."""
    views = [a.views(t, side) for t, side in zip(tensors, sides)]
    return [[v[i].unsqueeze(0) for v in views] for i, (sq, sk) in enumerate(a.seqs) if sq > 0 and sk > 0]


def nonempty(a):
    return [i for i, (sq, sk) in enumerate(a.seqs) if sq > 0 and sk > 0]


def fwd_dense(a, x, gqa):
    q, k, v = (a.to_bhsd(x[n]) for n in "qkv")

    def call():
        return sdpa(a, q, k, v, gqa)
    return call, {"o": a.to_bhsd(call())}


def fwd_nested(a, x, gqa):
    oq, ok = offsets_of(a)
    q, k, v = jagged(x["q"], oq), jagged(x["k"], ok), jagged(x["v"], ok)

    def call():
        return sdpa(a, q, k, v, gqa)
    return call, {"o": call().transpose(1, 2).values()}


def fwd_looped(a, x, gqa):
    parts = looped_parts(a, [x["q"], x["k"], x["v"]], "qkk")

    def call():
        return [sdpa(a, q, k, v, gqa) for q, k, v in parts]
    o = torch.zeros(a.shapes()["o"], dtype=a.dtype, device=DEVICE)
    o_views = a.views(o, "q")
    for i, out in zip(nonempty(a), call()):
        o_views[i].copy_(out[0])
    return call, {"o": o}


def leaf(t):
    return t.detach().requires_grad_()


def bwd_dense(a, x, gqa):
    q, k, v = (leaf(x[n]) for n in "qkv")
    o = sdpa(a, a.to_bhsd(q), a.to_bhsd(k), a.to_bhsd(v), gqa)
    do = a.to_bhsd(x["do"])

    def call():
        return torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    return call, dict(zip(("dq", "dk", "dv"), call()))


def bwd_nested(a, x, gqa):
    oq, ok = offsets_of(a)
    q, k, v = (leaf(x[n]) for n in "qkv")
    o = sdpa(a, jagged(q, oq), jagged(k, ok), jagged(v, ok), gqa)
    do = jagged(x["do"], oq)

    def call():
        return torch.autograd.grad(o, (q, k, v), do, retain_graph=True)
    return call, dict(zip(("dq", "dk", "dv"), call()))


def bwd_looped(a, x, gqa):
    """One leaf per sequence (slicing one packed leaf would add a full-size zero-fill per sequence to
    the timed backward); one autograd.grad over all sequences."""
    parts = [[leaf(t) for t in part] for part in looped_parts(a, [x["q"], x["k"], x["v"]], "qkk")]
    outs = [sdpa(a, q, k, v, gqa) for q, k, v in parts]
    dos = [part[0] for part in looped_parts(a, [x["do"]], "q")]
    leaves = [t for part in parts for t in part]

    def call():
        return torch.autograd.grad(outs, leaves, dos, retain_graph=True)
    grads = call()
    packed = {name: torch.zeros(x[src].shape, dtype=a.dtype, device=DEVICE) for name, src in (("dq", "q"), ("dk", "k"), ("dv", "v"))}
    views = {name: a.views(t, "q" if name == "dq" else "k") for name, t in packed.items()}
    for n, i in enumerate(nonempty(a)):
        for j, name in enumerate(("dq", "dk", "dv")):
            views[name][i].copy_(grads[3 * n + j][0])
    return call, packed


# Above this head dim torch 2.11's jagged-nested SDPA under the cuDNN backend never returned (H200,
# d512 varlen forward: still inside the op after 150 s, in three runs), where the dense call fails at
# once with "No available kernel"; so it is recorded as an error without being called, and the
# baseline is looped over the sequences instead.
NESTED_CUDNN_MAX_HEAD_DIM = 256


def nested_or_stall(a, name, nested):
    """`nested`, or for torch-cudnn above NESTED_CUDNN_MAX_HEAD_DIM a setup that raises SlowBaseline."""
    if name != "torch-cudnn" or max(a.d, a.dv) <= NESTED_CUDNN_MAX_HEAD_DIM:
        return nested

    def stalls(*_):
        raise SlowBaseline(f"jagged nested SDPA stalls at head dim {max(a.d, a.dv)} (> {NESTED_CUDNN_MAX_HEAD_DIM}): not called")
    return stalls


def attention_baselines(a, x, references, plan, backward):
    """The three SDPA backends; varlen as jagged nested tensors, and for a backend that rejects them,
    looped over the sequences as `<name>-looped`. GQA through enable_gqa, else by repeating K/V."""
    dense, nested, looped = (bwd_dense, bwd_nested, bwd_looped) if backward else (fwd_dense, fwd_nested, fwd_looped)
    figure = tflops_figure(a.flops() * (2.5 if backward else 1.0))
    out = {}

    def attempts(setup, base_form):
        return [Attempt(lambda gqa=gqa: setup(a, x, gqa), "; ".join(f for f in (base_form, form) if f), context)
                for gqa, form in gqa_forms(a)]
    for name, backend in SDPA_BACKENDS:
        context = sdpa_context(backend)
        if a.layout != "varlen":
            out[name] = run_baseline(name, attempts(dense, None), references, plan, figure)
            continue
        out[name] = run_baseline(name, attempts(nested_or_stall(a, name, nested), "nested jagged tensors"), references, plan, figure)
        if "error" in out[name]:
            out[name + "-looped"] = run_baseline(name + "-looped", attempts(looped, "looped over sequences"), references, plan, figure)
    return out


# ---------------------------------------------------------------------------------------------
# Sparge: the reference of the same sparse computation (kernels/sparge/src/spargeReference.ts)

@dataclasses.dataclass
class SpargeCheck:
    """A Sparge check's settings: check options over the case's params."""
    block_q: int
    block_k: int
    causal: bool
    scale: float
    pv_mode: str
    thresholds: list  # per query head, log2 units; inf never skips
    warp_rows: int
    tail: int
    in_denominator: bool

    @staticmethod
    def of(params, options, h, d):
        options = options or {}

        def pick(key, default):
            value = options.get(key)
            return default if value is None else value
        pv_mode = str(pick("pv_mode", "none"))
        if pv_mode not in ("none", "warp", "block"):
            raise ValueError(f"pv_mode must be none, warp or block, not {pv_mode!r}")
        raw = options.get("pv_threshold")
        raw = [raw] * h if raw is None or isinstance(raw, (int, float)) else list(raw)
        # JSON has no Infinity: null (JSON.stringify's Infinity) and values past fp32 (Number.MAX_VALUE,
        # +inf to the kernel's fp32 array) never skip.
        thresholds = [math.inf if t is None or float(t) > FP32_MAX else float(t) for t in raw]
        if len(thresholds) != h or any(not t >= 0 for t in thresholds):
            raise ValueError(f"pv_threshold must be a number >= 0 or {h} of them, not {options.get('pv_threshold')!r}")
        scale = pick("scale", params.get("scale"))
        check = SpargeCheck(block_q=int(params.get("block_q") or 128), block_k=int(params.get("block_k") or 128),
                            causal=bool(pick("causal", bool(params.get("causal")))),
                            scale=float(scale) if scale is not None else 1 / math.sqrt(d), pv_mode=pv_mode,
                            thresholds=thresholds, warp_rows=int(pick("warp_rows", 16)), tail=int(pick("always_computed_tail", 1)),
                            in_denominator=bool(pick("skipped_mass_in_denominator", False)))
        if check.warp_rows < 1 or check.tail < 0 or check.block_q < 1 or check.block_k < 1:
            raise ValueError(f"bad sparge check settings {check}")
        return check

    @property
    def skips(self):
        return self.pv_mode != "none" and any(math.isfinite(t) for t in self.thresholds)


def sparge_reference(q, k, v, block_map, check, q_dequant=None, k_dequant=None):
    """fp32 O (b, h, sq, dv) of attention restricted to the visited blocks (block_map == 1) and the
    top-left causal mask, Q·Kᵀ from q_dequant/k_dequant when given; PV-skip modes follow
    spargePvSkipAttentionReference."""
    qs = q if q_dequant is None else q_dequant
    ks = k if k_dequant is None else k_dequant
    b, h, sq, _ = q.shape
    hk, sk = k.shape[1], k.shape[2]
    grid = [b, h, -(-sq // check.block_q), -(-sk // check.block_k)]
    if list(block_map.shape) != grid:
        raise ValueError(f"block_map shape {list(block_map.shape)}, expected {grid}")
    if h % hk or (q_dequant is not None and q_dequant.shape != q.shape) or (k_dequant is not None and k_dequant.shape != k.shape):
        raise ValueError("sparge: q/k/v/dequant shapes disagree")
    visited = block_map == 1
    if check.skips:
        return sparge_pv_skip(qs, ks, v, visited, check)
    return sparge_masked(qs, ks, v, visited, check), None


def sparge_masked(q, k, v, visited, check):
    """Dense fp32 attention restricted to the visited blocks, chunked like attention_reference."""
    b, h, sq, _ = q.shape
    hk, sk = k.shape[1], k.shape[2]
    group = h // hk
    out = torch.zeros((b, h, sq, v.shape[-1]), dtype=torch.float32, device=DEVICE)
    key_block = torch.arange(sk, device=DEVICE) // check.block_k
    causal = causal_mask(sq, sk, top_left=True) if check.causal else None
    for bi in range(b):
        for kvh in range(hk):
            heads = slice(kvh * group, (kvh + 1) * group)
            head_map = visited[bi, heads]

            def mask(r0, r1, head_map=head_map):
                m = head_map[:, torch.arange(r0, r1, device=DEVICE) // check.block_q][:, :, key_block]
                return m if causal is None else m & causal(r0, r1)
            out[bi, heads] = attention_rows(q[bi, heads], k[bi, kvh], v[bi, kvh], check.scale, mask)
    return out


def pad_rows(x, rows):
    """(n, s, dim) -> (n, rows, dim), zero rows appended."""
    return F.pad(x, (0, 0, 0, rows - x.shape[1]))


def sparge_pv_skip(q, k, v, visited, check):
    """spargePvSkipAttentionReference in fp32, vectorized over (b·h head, query block) and looping
    over the position in each query block's ascending list of visited key blocks. Returns O and
    the excuse of each element: what the votes within VOTE_MARGIN of their threshold (which the
    kernel's own rounding may decide either way) can change it by."""
    b, h, sq, d = q.shape
    hk, sk, dv = k.shape[1], k.shape[2], v.shape[-1]
    bq, bk = check.block_q, check.block_k
    qb, kb = visited.shape[2], visited.shape[3]
    k_blocks = pad_rows(k.reshape(b * hk, sk, d).float(), kb * bk).view(b * hk, kb, bk, d)
    v_blocks = pad_rows(v.reshape(b * hk, sk, dv).float(), kb * bk).view(b * hk, kb, bk, dv)
    q_heads = q.reshape(b * h, sq, d)
    visited = visited.reshape(b * h, qb, kb)
    thresholds = torch.tensor(check.thresholds, dtype=torch.float32, device=DEVICE)
    out = torch.empty((b * h, sq, dv), dtype=torch.float32, device=DEVICE)
    excuse = torch.empty((b * h, sq, dv), dtype=torch.float32, device=DEVICE)
    heads_per_group = max(1, SCORE_ELEMENTS // (qb * bq * max(bk, d, dv)))
    for g0 in range(0, b * h, heads_per_group):
        bh = torch.arange(g0, min(b * h, g0 + heads_per_group), device=DEVICE)
        kv = (bh // h) * hk + (bh % h) // (h // hk)
        q_blocks = pad_rows(q_heads[g0:g0 + len(bh)].float(), qb * bq).view(len(bh), qb, bq, d)
        acc, slack = pv_skip_heads(q_blocks, k_blocks, v_blocks, kv, visited[g0:g0 + len(bh)], thresholds[bh % h], check, sq, sk)
        out[g0:g0 + len(bh)] = acc.reshape(len(bh), qb * bq, dv)[:, :sq]
        excuse[g0:g0 + len(bh)] = slack.reshape(len(bh), qb * bq, dv)[:, :sq]
    return out.view(b, h, sq, dv), excuse.view(b, h, sq, dv)


def pv_skip_heads(q_blocks, k_blocks, v_blocks, kv, visited, thresholds, check, sq, sk):
    """O (G, QB, bq, dv) of G heads' query blocks (q_blocks (G, QB, bq, d)); kv: each head's row of
    k_blocks / v_blocks (heads·KB blocks of bk rows); visited (G, QB, KB); thresholds (G,)."""
    g, qb, bq, _ = q_blocks.shape
    kb, bk = visited.shape[-1], k_blocks.shape[2]
    dev = q_blocks.device
    counts = visited.sum(-1)
    order = torch.argsort((~visited).long() * kb + torch.arange(kb, device=dev), dim=-1)  # visited first, ascending
    rows = torch.arange(qb * bq, device=dev).view(qb, bq)
    rows_in = (rows < sq)[None, :, :, None]  # rows past seqlen see no key: they neither count nor vote
    m = torch.full((g, qb, bq), -math.inf, device=dev)
    l = torch.zeros((g, qb, bq), device=dev)
    acc = torch.zeros((g, qb, bq, v_blocks.shape[-1]), device=dev)
    slack_acc = torch.zeros_like(acc)  # Σ over undecidable votes of P·|V|, rescaled like acc
    slack_l = torch.zeros_like(l)  # Σ over undecidable votes of rowsum P, rescaled like l
    for position in range(int(counts.max()) if counts.numel() else 0):
        j = order[..., position]
        active = position < counts
        keys = j[..., None] * bk + torch.arange(bk, device=dev)  # (G, QB, bk)
        keep = (keys < sk)[:, :, None, :] & active[:, :, None, None] & rows_in
        if check.causal:
            keep = keep & (keys[:, :, None, :] <= rows[None, :, :, None])
        t = torch.matmul(q_blocks, k_blocks[kv[:, None], j].transpose(-1, -2)).mul_(check.scale * LOG2E)
        t.masked_fill_(~keep, -math.inf)
        m_loc = t.amax(-1)
        delta = (m_loc - m).masked_fill_(m_loc == -math.inf, -math.inf)
        m_new = torch.maximum(m, m_loc)
        factor = torch.exp2(m - m_new).masked_fill_(m_new == -math.inf, 1.0)
        for x in (l, slack_l):
            x.mul_(factor)
        for x in (acc, slack_acc):
            x.mul_(factor[..., None])
        m = m_new
        eligible = active & (position < counts - check.tail)
        compute, undecided = pv_vote(delta, thresholds, eligible, check)
        p = torch.exp2(t.sub_(m.masked_fill(m == -math.inf, 0.0)[..., None]))
        slack_l += p.sum(-1) * undecided
        slack_acc += torch.matmul(p * undecided[..., None], v_blocks[kv[:, None], j].abs())
        l += p.sum(-1) * (compute | check.in_denominator)
        acc += torch.matmul(p.mul_(compute[..., None]), v_blocks[kv[:, None], j])
    has = (l > 0)[..., None]
    o = acc / l.masked_fill(l <= 0, 1.0)[..., None] * has
    # Flipping an undecided vote moves P·V (and, upstream, l) by that block's share: bounded by
    # (Σ P·|V| + |O|·Σ P) / l over the undecided blocks.
    slack = (slack_acc + o.abs() * slack_l[..., None]) / l.masked_fill(l <= 0, 1.0)[..., None] * has
    return o, slack


# A vote whose max Δ + threshold lies within this many log2 units of 0 is undecidable: the kernel's
# logits (tensor-core fp32 sums in another order) differ from these by ~1e-5 units.
VOTE_MARGIN = 2.0 ** -10


def pv_vote(delta, thresholds, eligible, check):
    """Per row (G, QB, bq): whether its group computes P·V, and whether that vote is undecidable
    (within VOTE_MARGIN of the threshold). A group (block: all rows; warp: warp_rows consecutive
    rows) computes iff it is not eligible, its threshold is infinite, or max Δ + threshold > 0."""
    g, qb, bq = delta.shape
    size = bq if check.pv_mode == "block" else check.warp_rows
    groups = -(-bq // size)
    vote = F.pad(delta, (0, groups * size - bq), value=-math.inf).view(g, qb, groups, size).amax(-1)
    threshold = thresholds.view(g, 1, 1)
    fixed = torch.isinf(threshold) | ~eligible[..., None]
    compute = (vote + threshold > 0) | fixed
    undecided = ((vote + threshold).abs() < VOTE_MARGIN) & ~fixed
    widen = lambda x: x.repeat_interleave(size, dim=-1)[..., :bq]  # noqa: E731
    return widen(compute), widen(undecided)


# ---------------------------------------------------------------------------------------------
# DSA lightning indexer and exact top-k (kernels/dsa): inputs drawn on the device (e4m3 bytes, the
# paged index-key cache), fp32 references from the exact e4m3 values, torch baselines (bf16
# matmuls, fp8 _scaled_mm, torch.topk) and the HBM read bandwidth of the same run

DSA_HEAD_DIM = 128
DSA_PAGE_TOKENS = 64
DSA_PAGE_SCALE_OFFSET = DSA_PAGE_TOKENS * DSA_HEAD_DIM  # a page: 64 x 128 e4m3 bytes, then 64 fp32 scales
DSA_PAGE_BYTES = DSA_PAGE_TOKENS * (DSA_HEAD_DIM + 4)  # 8448
DSA_E4M3_MAX = 448.0
DSA_AMAX_FLOOR = 1e-4
DSA_STAGES = ("indexer", "topk", "fused")
HBM_READ_BYTES = 4 << 30
# Bytes of the bf16 (or fp8) score block torch's prefill baselines compute at once (queries x heads x keys).
DSA_TORCH_SCORE_BYTES = 4 << 30
FP8_E4M3 = getattr(torch, "float8_e4m3fn", None)


def e4m3_table():
    """The fp32 value of every e4m3fn byte (NaN at 0x7f and 0xff), exactly."""
    values = []
    for bits in range(256):
        sign = -1.0 if bits & 0x80 else 1.0
        exponent, mantissa = (bits >> 3) & 0xF, bits & 7
        if exponent == 15 and mantissa == 7:
            values.append(math.nan)
        elif exponent == 0:
            values.append(sign * mantissa * 2.0 ** -9)
        else:
            values.append(sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7))
    return torch.tensor(values, dtype=torch.float32)


E4M3_TABLE = e4m3_table()


def e4m3_values(raw):
    """The fp32 values of e4m3fn bytes (a uint8 tensor), exactly (torch's float8 view, or the table without one)."""
    if FP8_E4M3 is not None:
        return raw.view(FP8_E4M3).float()
    return E4M3_TABLE.to(raw.device)[raw.long()]


def e4m3_bytes(x):
    """The e4m3fn bytes of fp32 x: nearest, ties to even, saturated to ±448 (cvt.rn.satfinite.e4m3x2.f32);
    the sign of −0 and of negative underflows is kept."""
    x = x.clamp(-DSA_E4M3_MAX, DSA_E4M3_MAX)
    if FP8_E4M3 is not None:
        return x.to(FP8_E4M3).view(torch.uint8)
    table = E4M3_TABLE[:127].to(x.device)  # 0x00 … 0x7e: the non-negative finite values, ascending
    magnitude = x.abs()
    hi = torch.searchsorted(table, magnitude).clamp_(max=126)
    lo = (hi - 1).clamp_(min=0)
    below, above = magnitude - table[lo], table[hi] - magnitude
    pick = torch.where(above < below, hi, torch.where(below < above, lo, torch.where(hi % 2 == 0, hi, lo)))
    return (pick | (torch.signbit(x).long() << 7)).to(torch.uint8)


def quantize_rows(x):
    """Per row of x (fp32, last dim 128), kernels/dsa's dsaQuantizeIndexKeys: scale = fp32(max(amax, 1e-4) / 448)
    (one fp32 division), bytes = e4m3(fp32(x / scale)). Returns (bytes uint8, scales fp32)."""
    scale = x.abs().amax(-1).clamp_min(DSA_AMAX_FLOOR) / DSA_E4M3_MAX
    return e4m3_bytes(x / scale.unsqueeze(-1)), scale


def cache_views(cache):
    """The e4m3 values [pages, 64, 128] (uint8) and the scales [pages, 64] (fp32) of a paged cache [pages, 8448] (views)."""
    pages = cache.shape[0]
    values = cache[:, :DSA_PAGE_SCALE_OFFSET].view(pages, DSA_PAGE_TOKENS, DSA_HEAD_DIM)
    return values, cache[:, DSA_PAGE_SCALE_OFFSET:].view(torch.float32)


def draw_keys(tokens, g):
    """`tokens` index keys: randn rounded to bf16 (the writer's input), quantized per token. Returns (bytes, scales)."""
    keys = torch.randn((tokens, DSA_HEAD_DIM), dtype=torch.float32, generator=g, device=DEVICE).to(torch.bfloat16).float()
    return quantize_rows(keys)


def draw_queries(rows, heads, g):
    """q e4m3 [rows, heads, 128] (randn quantized per head row) and weights fp32 [rows, heads]: randn · heads^-½ · 128^-½
    times the head row's q scale (the q scale and the softmax scale folded in, as DeepSeek-V3.2's indexer does)."""
    q8, q_scale = quantize_rows(torch.randn((rows * heads, DSA_HEAD_DIM), dtype=torch.float32, generator=g, device=DEVICE))
    weights = torch.randn((rows, heads), dtype=torch.float32, generator=g, device=DEVICE)
    weights = weights * (heads ** -0.5 * DSA_HEAD_DIM ** -0.5) * q_scale.view(rows, heads)
    return q8.view(rows, heads, DSA_HEAD_DIM), weights


def describe_dsa_draw(what):
    return lambda seed: (f"dsa: torch {torch.__version__} randn(float32, torch.Generator(device={DEVICE!r}).manual_seed({seed})); "
                         f"{what}; per-row e4m3 quantization scale = max(amax, 1e-4)/448 (keys rounded to bf16 first), "
                         "REFERENCE_OPS.md dsa_indexer_* drawing order")


def topk_values(logits, k):
    """The k largest logits of each row, descending; −∞ pads a row shorter than k."""
    kept = min(k, logits.shape[-1])
    values = torch.topk(logits, kept, dim=-1).values
    return F.pad(values, (0, k - kept), value=-math.inf) if kept < k else values


def selected_values(logits, indices):
    """The logits a selection picked (index −1: −∞), sorted descending: how a top-k output is checked (ties may differ)."""
    values = logits.float().gather(-1, indices.long().clamp_min(0)).masked_fill_(indices < 0, -math.inf)
    return values.sort(dim=-1, descending=True).values


def fp8_view(raw):
    """e4m3fn bytes (uint8) as torch's float8_e4m3fn (a view), for _scaled_mm."""
    if FP8_E4M3 is None:
        raise RuntimeError(f"torch {torch.__version__} has no float8_e4m3fn")
    return raw.view(FP8_E4M3)


def scaled_mm(a, b, scale_a, scale_b, out=None):
    """torch._scaled_mm with a bf16 result (row-major a, column-major b), into `out` when given."""
    kwargs = {"scale_a": scale_a, "scale_b": scale_b, "out_dtype": torch.bfloat16}
    return torch._scaled_mm(a, b, **kwargs) if out is None else torch._scaled_mm(a, b, **kwargs, out=out)


def hbm_read_baseline(nbytes, references, plan):
    """`hbm-read`: torch.sum over an nbytes fp32 tensor, GB/s of the bytes read (the HBM read bandwidth of this run)."""
    def setup():
        x = torch.ones(nbytes // 4, dtype=torch.float32, device=DEVICE)
        return (lambda: torch.sum(x)), {}
    form = f"torch.sum over a {nbytes / 2 ** 30:g} GiB fp32 tensor"
    return run_baseline("hbm-read", [Attempt(setup, form)], references, plan, gbps_figure(nbytes))


@dataclasses.dataclass(frozen=True)
class DsaDecode:
    """A dsa_indexer_decode case: b sequences of context L (every one), next_n queries each, h heads, top-k k."""
    b: int
    L: int
    h: int
    next_n: int
    k: int
    stage: str
    hbm_read_bytes: int

    @staticmethod
    def of(p):
        d = DsaDecode(b=int(p["b"]), L=int(p["L"]), h=int(p.get("h") or 64), next_n=int(p.get("next_n") or 1),
                      k=int(p.get("k") or 2048), stage=str(p.get("stage") or "indexer"),
                      hbm_read_bytes=int(p.get("hbm_read_bytes") or HBM_READ_BYTES))
        if int(p.get("page") or DSA_PAGE_TOKENS) != DSA_PAGE_TOKENS:
            raise ValueError(f"page must be {DSA_PAGE_TOKENS} tokens, not {p.get('page')}")
        if d.stage not in DSA_STAGES:
            raise ValueError(f"stage must be one of {', '.join(DSA_STAGES)}, not {d.stage!r}")
        if min(d.b, d.L, d.h, d.next_n, d.k) < 1 or d.next_n > d.L or d.hbm_read_bytes < 4:
            raise ValueError(f"bad dsa_indexer_decode params {p}")
        return d

    @property
    def rows(self):
        return self.b * self.next_n

    @property
    def max_pages(self):
        return -(-self.L // DSA_PAGE_TOKENS)

    @property
    def num_pages(self):
        return self.b * self.max_pages + 1  # one spare page, never referenced, left all 0xff (e4m3 NaN, NaN scales)

    def inputs(self):
        if self.stage == "topk":
            return [("logits", [self.rows, self.L], torch.float32)]
        return [("q", [self.b, self.next_n, self.h, DSA_HEAD_DIM], torch.uint8), ("weights", [self.rows, self.h], torch.float32),
                ("cache", [self.num_pages, DSA_PAGE_BYTES], torch.uint8), ("block_table", [self.b, self.max_pages], torch.int32),
                ("context_lens", [self.b], torch.int32)]

    def bytes_read(self):
        """What the indexer reads: the cache of every context token (132 B), q, weights, block table, context lengths."""
        return (self.b * self.L * (DSA_HEAD_DIM + 4) + self.rows * self.h * (DSA_HEAD_DIM + 4)
                + self.b * self.max_pages * 4 + self.b * 4)

    def figure(self):
        """GB/s: topk of the logits read once (rows·L·4), indexer and fused of bytes_read()."""
        return gbps_figure(self.rows * self.L * 4 if self.stage == "topk" else self.bytes_read())


def dsa_decode_draw(p, g):
    """Block table (randperm of the pages), keys sequence by sequence into the pages, q and weights;
    context = L for every sequence. Stage topk: the fp32 reference logits of those inputs instead."""
    d = DsaDecode.of(p)
    order = torch.randperm(d.num_pages, generator=g, device=DEVICE)
    block_table = order[: d.b * d.max_pages].view(d.b, d.max_pages).to(torch.int32)
    cache = torch.full((d.num_pages, DSA_PAGE_BYTES), 0xFF, dtype=torch.uint8, device=DEVICE)
    values, scales = cache_views(cache)
    for b in range(d.b):
        k8, k_scale = draw_keys(d.max_pages * DSA_PAGE_TOKENS, g)
        pages = block_table[b].long()
        values[pages] = k8.view(d.max_pages, DSA_PAGE_TOKENS, DSA_HEAD_DIM)
        scales[pages] = k_scale.view(d.max_pages, DSA_PAGE_TOKENS)
    q8, weights = draw_queries(d.rows, d.h, g)
    x = {"q": q8.view(d.b, d.next_n, d.h, DSA_HEAD_DIM), "weights": weights, "cache": cache, "block_table": block_table,
         "context_lens": torch.full((d.b,), d.L, dtype=torch.int32, device=DEVICE)}
    return {"logits": dsa_decode_logits(d, x)} if d.stage == "topk" else x


def dsa_decode_keys(d, x, seqs):
    """Sequences `seqs` (a slice) keys read through the block table: e4m3 bytes [n, pages·64, 128] and scales [n, pages·64]."""
    values, scales = cache_views(x["cache"])
    pages = x["block_table"][seqs].long()
    n = pages.shape[0]
    return values[pages].reshape(n, -1, DSA_HEAD_DIM), scales[pages].reshape(n, -1)


def dsa_decode_keep(d, context, columns):
    """[b, next_n, columns]: query r of sequence b (at position context − next_n + r) sees positions p < context − next_n + r + 1."""
    limit = context.long()[:, None] - d.next_n + 1 + torch.arange(d.next_n, device=context.device)[None, :]
    return torch.arange(columns, device=context.device)[None, None, :] < limit[..., None]


def dsa_decode_logits(d, x):
    """fp32 logits [b·next_n, L]: kScale_p · Σ_h w·ReLU(q8·k8_p) from the exact e4m3 values, −∞ where masked; chunked over sequences."""
    out = torch.empty((d.b, d.next_n, d.L), dtype=torch.float32, device=DEVICE)
    q = e4m3_values(x["q"]).view(d.b, d.next_n * d.h, DSA_HEAD_DIM)
    w = x["weights"].view(d.b, d.next_n, d.h, 1)
    keep = dsa_decode_keep(d, x["context_lens"], d.L)
    per = max(1, SCORE_ELEMENTS // (d.next_n * d.h * d.max_pages * DSA_PAGE_TOKENS))
    for b0 in range(0, d.b, per):
        b1 = min(d.b, b0 + per)
        k8, k_scale = dsa_decode_keys(d, x, slice(b0, b1))
        scores = torch.matmul(q[b0:b1], e4m3_values(k8).transpose(1, 2)).relu_().view(b1 - b0, d.next_n, d.h, -1)
        logits = (scores * w[b0:b1]).sum(2).mul_(k_scale[:, None, :])[..., : d.L]
        out[b0:b1] = logits.masked_fill_(~keep[b0:b1], -math.inf)
    return out.view(d.rows, d.L)


def dsa_decode_reference(p, x):
    d = DsaDecode.of(p)
    if d.stage == "topk":
        return {"topk_values": topk_values(x["logits"], d.k)}
    logits = dsa_decode_logits(d, x)
    return {"logits": logits} if d.stage == "indexer" else {"logits": logits, "topk_values": topk_values(logits, d.k)}


def dsa_decode_torch_logits(d, x, kind, into=True):
    """The timed callable of one torch indexer form and what it starts from (made untimed: torch gets each
    sequence's keys contiguous, already read through the block table). kind: `bf16` (keys·scales
    dequantized to bf16, bmm), `fp8-rowwise` / `fp8-tensorwise` (_scaled_mm per sequence of e4m3 q and k,
    the key scales as its row-wise scale_b, or applied after the head sum; `into`: each sequence's
    scores written into one buffer with out=, else stacked); the head sum Σ_h w·ReLU(·) is a bf16 bmm
    with the weights. Returns a call giving the logits [b·next_n, L] (bf16; fp32 for fp8-tensorwise)."""
    k8, k_scale = dsa_decode_keys(d, x, slice(0, d.b))
    k8, k_scale = k8[:, : d.L].contiguous(), k_scale[:, : d.L].contiguous()
    w = x["weights"].to(torch.bfloat16).view(d.rows, 1, d.h)
    outside = ~dsa_decode_keep(d, x["context_lens"], d.L).view(d.rows, d.L)
    masks = bool(outside.any())

    def head_sum(scores):
        logits = torch.bmm(w, scores.relu_().view(d.rows, d.h, d.L)).view(d.rows, d.L)
        return logits.masked_fill_(outside, -math.inf) if masks else logits
    if kind == "bf16":
        keys = torch.empty((d.b, d.L, DSA_HEAD_DIM), dtype=torch.bfloat16, device=DEVICE)
        for b in range(d.b):
            keys[b] = (e4m3_values(k8[b]) * k_scale[b, :, None]).to(torch.bfloat16)
        q = e4m3_values(x["q"]).to(torch.bfloat16).view(d.b, d.next_n * d.h, DSA_HEAD_DIM)
        return lambda: head_sum(torch.bmm(q, keys.transpose(1, 2)))
    q8 = fp8_view(x["q"]).view(d.b, d.next_n * d.h, DSA_HEAD_DIM)
    k8 = fp8_view(k8)
    scores = torch.empty((d.b, d.next_n * d.h, d.L), dtype=torch.bfloat16, device=DEVICE) if into else None
    rowwise = kind == "fp8-rowwise"
    one = torch.ones((), dtype=torch.float32, device=DEVICE)
    ones = torch.ones((d.next_n * d.h, 1), dtype=torch.float32, device=DEVICE)
    after = None if rowwise else k_scale.repeat_interleave(d.next_n, dim=0)

    def sequence(b, out=None):
        return scaled_mm(q8[b], k8[b].t(), ones if rowwise else one, k_scale[b].view(1, d.L) if rowwise else one, out=out)

    def call():
        if into:
            for b in range(d.b):
                sequence(b, scores[b])
        logits = head_sum(scores if into else torch.stack([sequence(b) for b in range(d.b)]))
        return logits if after is None else logits.float().mul_(after)
    return call


DSA_TORCH_FORMS = (("torch-bf16", "bf16", "keys·scales dequantized to bf16 (untimed); bmm, ReLU, bf16 bmm head sum"),
                   ("torch-fp8-rowwise", "fp8-rowwise", "_scaled_mm per sequence, row-wise scales (key scales as scale_b); bf16 bmm head sum"),
                   ("torch-fp8-tensorwise", "fp8-tensorwise", "_scaled_mm per sequence, per-tensor scales 1; bf16 bmm head sum, then × key scales"))


def dsa_decode_baselines(p, x, references, plan):
    d = DsaDecode.of(p)
    figure = d.figure()
    if d.stage == "topk":
        logits = x["logits"]

        def topk(sorted_):
            def setup():
                def call():
                    return torch.topk(logits, min(d.k, d.L), dim=-1, sorted=sorted_).indices
                return call, {"topk_values": selected_values(logits, call())}
            return setup
        return {"torch-topk": run_baseline("torch-topk", [Attempt(topk(True))], references, plan, figure),
                "torch-topk-unsorted": run_baseline("torch-topk-unsorted", [Attempt(topk(False), "sorted=False")], references, plan, figure)}
    out = {}
    for name, kind, form in DSA_TORCH_FORMS:
        def setup(kind=kind, into=True):
            logits = dsa_decode_torch_logits(d, x, kind, into)
            if d.stage == "indexer":
                return logits, {"logits": logits().float()}

            def fused():
                lg = logits()
                return lg, torch.topk(lg, min(d.k, d.L), dim=-1).indices
            lg, indices = fused()
            return fused, {"logits": lg.float(), "topk_values": selected_values(lg, indices)}
        form += "" if d.stage == "indexer" else "; torch.topk"
        attempts = [Attempt(setup, form)]
        if kind != "bf16":
            attempts.append(Attempt(lambda kind=kind: setup(kind, into=False), form + "; per-sequence results stacked (no out=)"))
        out[name] = run_baseline(name, attempts, references, plan, figure)
    if d.stage == "indexer":
        out["hbm-read"] = hbm_read_baseline(d.hbm_read_bytes, references, plan)
    return out


@dataclasses.dataclass(frozen=True)
class DsaPrefill:
    """A dsa_indexer_prefill case: s queries of h heads against L contiguous keys, causal windows ending at L."""
    s: int
    L: int
    h: int

    @staticmethod
    def of(p):
        d = DsaPrefill(s=int(p["s"]), L=int(p["L"]), h=int(p.get("h") or 64))
        if str(p.get("windows") or "causal") != "causal":
            raise ValueError(f"windows must be causal, not {p.get('windows')!r}")
        if min(d.s, d.L, d.h) < 1 or d.s > d.L:
            raise ValueError(f"bad dsa_indexer_prefill params {p} (1 <= s <= L)")
        return d

    def inputs(self):
        return [("q", [self.s, self.h, DSA_HEAD_DIM], torch.uint8), ("weights", [self.s, self.h], torch.float32),
                ("k", [self.L, DSA_HEAD_DIM], torch.uint8), ("k_scales", [self.L], torch.float32),
                ("window_start", [self.s], torch.int32), ("window_end", [self.s], torch.int32)]

    def window_keys(self):
        """Σ window lengths: query t sees [0, L − s + t + 1)."""
        return self.s * (self.L - self.s) + self.s * (self.s + 1) // 2

    def figure(self):
        """TFLOP/s of 2·Σ windows·h·128, and GB/s of the bytes read (q, weights, keys, scales, windows) and the logits written."""
        flops = 2 * self.window_keys() * self.h * DSA_HEAD_DIM
        moved = self.s * self.h * (DSA_HEAD_DIM + 4) + self.L * (DSA_HEAD_DIM + 4) + self.s * 8 + self.s * self.L * 4
        return lambda ms: {"tflops": flops / ms / 1e9, "gbps": moved / ms / 1e6}


def dsa_prefill_draw(p, g):
    """Keys, then q and weights, then the causal windows [0, L − s + t + 1)."""
    d = DsaPrefill.of(p)
    k8, k_scales = draw_keys(d.L, g)
    q8, weights = draw_queries(d.s, d.h, g)
    end = torch.arange(d.L - d.s + 1, d.L + 1, dtype=torch.int32, device=DEVICE)
    return {"q": q8, "weights": weights, "k": k8, "k_scales": k_scales,
            "window_start": torch.zeros(d.s, dtype=torch.int32, device=DEVICE), "window_end": end}


def dsa_prefill_keep(x, t0, t1, columns):
    cols = torch.arange(columns, device=x["window_end"].device)[None, :]
    return (cols >= x["window_start"][t0:t1, None]) & (cols < x["window_end"][t0:t1, None])


def dsa_prefill_reference(p, x):
    """fp32 logits [s, L]: kScale_p · Σ_h w·ReLU(q8·k8_p) inside query t's window, −∞ outside; chunked over queries."""
    d = DsaPrefill.of(p)
    out = torch.empty((d.s, d.L), dtype=torch.float32, device=DEVICE)
    keys = e4m3_values(x["k"])
    per = max(1, SCORE_ELEMENTS // (d.h * d.L))
    for t0 in range(0, d.s, per):
        t1 = min(d.s, t0 + per)
        q = e4m3_values(x["q"][t0:t1]).view((t1 - t0) * d.h, DSA_HEAD_DIM)
        scores = torch.matmul(q, keys.t()).relu_().view(t1 - t0, d.h, d.L)
        logits = (scores * x["weights"][t0:t1, :, None]).sum(1).mul_(x["k_scales"][None, :])
        out[t0:t1] = logits.masked_fill_(~dsa_prefill_keep(x, t0, t1, d.L), -math.inf)
    return {"logits": out}


def dsa_prefill_torch(d, x, kind):
    """The timed callable of one torch prefill form (DSA_TORCH_FORMS' kinds), chunked over queries so that one
    chunk's scores stay within DSA_TORCH_SCORE_BYTES; writes fp32 logits [s, L] with −∞ outside the windows."""
    out = torch.empty((d.s, d.L), dtype=torch.float32, device=DEVICE)
    per = max(1, min(d.s, DSA_TORCH_SCORE_BYTES // (2 * d.h * d.L)))
    chunks = [(t0, min(d.s, t0 + per)) for t0 in range(0, d.s, per)]
    outside = [~dsa_prefill_keep(x, t0, t1, d.L) for t0, t1 in chunks]  # made untimed: one mask per chunk
    w = x["weights"].to(torch.bfloat16).view(d.s, 1, d.h)
    if kind == "bf16":
        keys = (e4m3_values(x["k"]) * x["k_scales"][:, None]).to(torch.bfloat16)
        q = e4m3_values(x["q"]).to(torch.bfloat16).view(d.s * d.h, DSA_HEAD_DIM)

        def scores(t0, t1):
            return torch.matmul(q[t0 * d.h:t1 * d.h], keys.t())
    else:
        q8 = fp8_view(x["q"]).view(d.s * d.h, DSA_HEAD_DIM)
        k8 = fp8_view(x["k"])
        ones = torch.ones((per * d.h, 1), dtype=torch.float32, device=DEVICE)
        one = torch.ones((), dtype=torch.float32, device=DEVICE)
        rowwise = kind == "fp8-rowwise"
        scale_b = x["k_scales"].view(1, d.L) if rowwise else one

        def scores(t0, t1):
            return scaled_mm(q8[t0 * d.h:t1 * d.h], k8.t(), ones[:(t1 - t0) * d.h] if rowwise else one, scale_b)
    after = None if kind != "fp8-tensorwise" else x["k_scales"][None, :]

    def call():
        for (t0, t1), masked in zip(chunks, outside):
            logits = torch.bmm(w[t0:t1], scores(t0, t1).relu_().view(t1 - t0, d.h, d.L)).view(t1 - t0, d.L).float()
            if after is not None:
                logits.mul_(after)
            out[t0:t1] = logits.masked_fill_(masked, -math.inf)
        return out
    return call


def dsa_prefill_baselines(p, x, references, plan):
    d = DsaPrefill.of(p)
    out = {}
    for name, kind, form in DSA_TORCH_FORMS:
        def setup(kind=kind):
            call = dsa_prefill_torch(d, x, kind)
            return call, {"logits": call()}
        out[name] = run_baseline(name, [Attempt(setup, form.replace(" per sequence", " per query chunk"))], references, plan, d.figure())
    return out


# ---------------------------------------------------------------------------------------------
# DSA sparse MLA prefill (kernels/dsa): q [s_q, h_q, 576] and kv [s_kv, 576] bf16 drawn at realistic
# magnitudes, index rows of distinct random tokens; the fp32 reference and torch's gather-based baseline

MLA_QK_DIM = 576
MLA_V_DIM = 512
# Per-row magnitude 2^u of the drawn rows, u uniform in [lo, hi] (kernels/dsa's dsaRandomSparseMlaRows).
MLA_KV_LOG2_RANGE = (-0.5, 0.5)
MLA_Q_LOG2_RANGE = (-1.5, 0.5)
# Bytes of torch-gather's fp32 scores per query chunk (queries x heads x topk x 4).
MLA_TORCH_SCORE_BYTES = 1 << 30
# Elements of the random keys drawn at once for the index rows (queries x s_kv).
MLA_INDEX_DRAW_ELEMENTS = 1 << 26


@dataclasses.dataclass(frozen=True)
class MlaPrefill:
    """A dsa_sparse_mla_prefill case: s_q queries of h_q heads, each over topk of s_kv latent tokens."""
    s_q: int
    s_kv: int
    h_q: int
    topk: int
    sm_scale: float

    @staticmethod
    def of(p):
        d = MlaPrefill(s_q=int(p["s_q"]), s_kv=int(p["s_kv"]), h_q=int(p.get("h_q") or 128), topk=int(p.get("topk") or 2048),
                       sm_scale=float(p.get("sm_scale") or 0.135234))
        if min(d.s_q, d.s_kv, d.h_q, d.topk) < 1 or d.topk > d.s_kv or not (d.sm_scale > 0 and math.isfinite(d.sm_scale)):
            raise ValueError(f"bad dsa_sparse_mla_prefill params {p} (1 <= topk <= s_kv, sm_scale > 0)")
        if int(p.get("d_qk") or MLA_QK_DIM) != MLA_QK_DIM or int(p.get("d_v") or MLA_V_DIM) != MLA_V_DIM:
            raise ValueError(f"d_qk and d_v must be {MLA_QK_DIM} and {MLA_V_DIM}")
        return d

    def inputs(self):
        return [("q", [self.s_q, self.h_q, MLA_QK_DIM], torch.bfloat16), ("kv", [self.s_kv, MLA_QK_DIM], torch.bfloat16),
                ("indices", [self.s_q, self.topk], torch.int32)]

    def figure(self):
        """TFLOP/s of FlashMLA's count 2·Σvalid·h_q·(576 + 512); every drawn entry is valid."""
        flops = 2 * self.s_q * self.topk * self.h_q * (MLA_QK_DIM + MLA_V_DIM)
        return tflops_figure(flops)


def draw_mla_rows(rows, log2_range, g):
    """[rows, 576] bf16: randn times 2^u per row, u uniform in log2_range."""
    lo, hi = log2_range
    x = torch.randn((rows, MLA_QK_DIM), dtype=torch.float32, generator=g, device=DEVICE)
    u = torch.rand((rows, 1), dtype=torch.float32, generator=g, device=DEVICE)
    return (x * torch.exp2(lo + (hi - lo) * u)).to(torch.bfloat16)


def draw_index_rows(rows, s_kv, topk, g):
    """[rows, topk] int32: each row topk distinct tokens of [0, s_kv) in random order (the topk of uniform keys)."""
    out = torch.empty((rows, topk), dtype=torch.int32, device=DEVICE)
    per = max(1, MLA_INDEX_DRAW_ELEMENTS // s_kv)
    for t0 in range(0, rows, per):
        t1 = min(rows, t0 + per)
        keys = torch.rand((t1 - t0, s_kv), dtype=torch.float32, generator=g, device=DEVICE)
        out[t0:t1] = torch.topk(keys, topk, dim=-1).indices.to(torch.int32)
    return out


def mla_prefill_draw(p, g):
    """kv, then q, then the index rows."""
    d = MlaPrefill.of(p)
    kv = draw_mla_rows(d.s_kv, MLA_KV_LOG2_RANGE, g)
    q = draw_mla_rows(d.s_q * d.h_q, MLA_Q_LOG2_RANGE, g).view(d.s_q, d.h_q, MLA_QK_DIM)
    return {"q": q, "kv": kv, "indices": draw_index_rows(d.s_q, d.s_kv, d.topk, g)}


def describe_mla_draw(seed):
    return (f"dsa mla: torch {torch.__version__} torch.Generator(device={DEVICE!r}).manual_seed({seed}); kv then q: "
            "randn(float32) x 2^u per row (u uniform: kv [-0.5, 0.5], q [-1.5, 0.5]) rounded to bf16; index rows: "
            "topk of rand(s_kv) per query (distinct tokens, random order); REFERENCE_OPS.md dsa_sparse_mla_prefill")


def mla_check_indices(d, indices):
    if bool(((indices < 0) | (indices >= d.s_kv)).any()):
        raise ValueError(f"indices must lie in [0, s_kv = {d.s_kv}) (no invalid entries in this op)")


def mla_prefill_reference(p, x):
    """fp32 out [s_q, h_q, 512] and lse [s_q, h_q] (natural log): softmax(sm_scale · q·kv[idx]ᵀ) · kv[idx][:, :512], chunked."""
    d = MlaPrefill.of(p)
    mla_check_indices(d, x["indices"])
    out = torch.empty((d.s_q, d.h_q, MLA_V_DIM), dtype=torch.float32, device=DEVICE)
    lse = torch.empty((d.s_q, d.h_q), dtype=torch.float32, device=DEVICE)
    kv = x["kv"].float()
    per = max(1, SCORE_ELEMENTS // (d.h_q * d.topk))
    for t0 in range(0, d.s_q, per):
        t1 = min(d.s_q, t0 + per)
        keys = kv[x["indices"][t0:t1].long()]
        scores = torch.bmm(x["q"][t0:t1].float(), keys.transpose(1, 2)).mul_(d.sm_scale)
        lse[t0:t1] = torch.logsumexp(scores, dim=-1)
        out[t0:t1] = torch.bmm(torch.softmax(scores, dim=-1), keys[..., :MLA_V_DIM])
    return {"out": out, "lse": lse}


def mla_torch_attention(q, topk, sm_scale, gather):
    """torch's gather form of sparse MLA for query rows q (bf16 [rows, h_q, 576]), each over `topk` latent rows:
    attend(flat) takes per chunk of query rows their entries of flat (int64 [rows·topk]) to bf16 keys [n, 576] by
    `gather`, then a bf16 bmm for the scores, fp32 softmax and lse, P rounded to bf16 for the bf16 bmm with V = the first
    512 dims of the keys. Returns attend, writing into and returning out bf16 [rows, h_q, 512] and lse fp32 [rows, h_q]."""
    rows, h_q = q.shape[0], q.shape[1]
    out = torch.empty((rows, h_q, MLA_V_DIM), dtype=torch.bfloat16, device=DEVICE)
    lse = torch.empty((rows, h_q), dtype=torch.float32, device=DEVICE)
    per = max(1, min(rows, MLA_TORCH_SCORE_BYTES // (4 * h_q * topk)))
    chunks = [(t0, min(rows, t0 + per)) for t0 in range(0, rows, per)]

    def attend(flat):
        for t0, t1 in chunks:
            keys = gather(flat[t0 * topk:t1 * topk]).view(t1 - t0, topk, MLA_QK_DIM)
            scores = torch.bmm(q[t0:t1], keys.transpose(1, 2)).float().mul_(sm_scale)
            row_lse = torch.logsumexp(scores, dim=-1)
            lse[t0:t1] = row_lse
            probs = scores.sub_(row_lse.unsqueeze(-1)).exp_().to(torch.bfloat16)
            out[t0:t1] = torch.bmm(probs, keys[..., :MLA_V_DIM])
        return out, lse
    return attend


def mla_prefill_torch(d, x):
    """torch-gather's timed call: mla_torch_attention over the indexed bf16 kv rows (index_select)."""
    flat = x["indices"].long().reshape(-1)  # made untimed
    attend = mla_torch_attention(x["q"], d.topk, d.sm_scale, lambda f: x["kv"].index_select(0, f))
    return lambda: attend(flat)


def mla_prefill_baselines(p, x, references, plan):
    d = MlaPrefill.of(p)

    def setup():
        call = mla_prefill_torch(d, x)
        out, lse = call()
        return call, {"out": out, "lse": lse}
    form = "index_select gather per query chunk; bf16 bmm scores, fp32 softmax and lse, bf16 P·V bmm"
    return {"torch-gather": run_baseline("torch-gather", [Attempt(setup, form)], references, plan, d.figure())}


# DSA sparse MLA decode over the FP8 MLA cache (656-byte tokens: 512 e4m3, 4 fp32 tile scales, 64 bf16 RoPE; pages of 64)
MLA_PAGE_TOKENS = 64
MLA_TOKEN_BYTES = 656
MLA_E4M3_MAX = 448.0
MLA_SCALE_FLOOR = 1e-4


@dataclasses.dataclass(frozen=True)
class MlaDecode:
    """A dsa_sparse_mla_decode case: b sequences of s_q queries of h_q heads, each over topk of one s_kv-token FP8 cache."""
    b: int
    s_q: int
    s_kv: int
    h_q: int
    topk: int
    sm_scale: float

    @staticmethod
    def of(p):
        d = MlaDecode(b=int(p["b"]), s_q=int(p.get("s_q") or 1), s_kv=int(p["s_kv"]), h_q=int(p.get("h_q") or 128),
                      topk=int(p.get("topk") or 2048), sm_scale=float(p.get("sm_scale") or 0.135234))
        if min(d.b, d.s_q, d.s_kv, d.h_q, d.topk) < 1 or d.topk > d.s_kv or d.s_kv % MLA_PAGE_TOKENS != 0 \
                or not (d.sm_scale > 0 and math.isfinite(d.sm_scale)):
            raise ValueError(f"bad dsa_sparse_mla_decode params {p} (1 <= topk <= s_kv, s_kv a multiple of 64, sm_scale > 0)")
        return d

    @property
    def pages(self):
        return self.s_kv // MLA_PAGE_TOKENS

    @property
    def rows(self):
        return self.b * self.s_q

    def inputs(self):
        return [("q", [self.b, self.s_q, self.h_q, MLA_QK_DIM], torch.bfloat16),
                ("cache", [self.pages, MLA_PAGE_TOKENS * MLA_TOKEN_BYTES], torch.uint8),
                ("indices", [self.b, self.s_q, self.topk], torch.int32)]

    def figure(self):
        """TFLOP/s of FlashMLA's count 2·Σvalid·h_q·(576 + 512); every drawn entry is valid."""
        return tflops_figure(2 * self.rows * self.topk * self.h_q * (MLA_QK_DIM + MLA_V_DIM))


def mla_quantize_cache(latent):
    """bf16 [tokens, 576] → uint8 [tokens, 656]: per 128-value tile s = 2^ceil(log2(max(amax / 448, 1e-4))) (on the fp32
    bits), e4m3 = x / s rounded to nearest even, the 4 scales as fp32, the 64 RoPE values as bf16 (kernels/dsa's writer)."""
    tokens = latent.shape[0]
    tiles = latent[:, :MLA_V_DIM].float().view(tokens, 4, 128)
    ratio = torch.clamp(tiles.abs().amax(dim=-1) / MLA_E4M3_MAX, min=MLA_SCALE_FLOOR)
    scale = ((ratio.view(torch.int32) + 0x7FFFFF) & -0x800000).view(torch.float32)
    e4m3 = (tiles / scale.unsqueeze(-1)).to(torch.float8_e4m3fn).view(tokens, MLA_V_DIM)
    rope = latent[:, MLA_V_DIM:].contiguous()
    return torch.cat([e4m3.view(torch.uint8), scale.contiguous().view(torch.uint8), rope.view(torch.uint8)], dim=1)


def mla_dequantize_rows(rows):
    """uint8 [n, 656] → bf16 [n, 576]: bf16(e4m3 · scale) (exact) for the 512 latent dims, the RoPE bf16 as stored."""
    n = rows.shape[0]
    e4m3 = rows[:, :MLA_V_DIM].contiguous().view(torch.float8_e4m3fn).float().view(n, 4, 128)
    scale = rows[:, MLA_V_DIM:MLA_V_DIM + 16].contiguous().view(torch.float32)
    nope = (e4m3 * scale.unsqueeze(-1)).view(n, MLA_V_DIM).to(torch.bfloat16)
    return torch.cat([nope, rows[:, MLA_V_DIM + 16:].contiguous().view(torch.bfloat16)], dim=1)


def mla_decode_draw(p, g):
    """The latent rows of the cache (as kv of dsa_sparse_mla_prefill), quantized; then q; then the index rows."""
    d = MlaDecode.of(p)
    cache = mla_quantize_cache(draw_mla_rows(d.s_kv, MLA_KV_LOG2_RANGE, g)).view(d.pages, MLA_PAGE_TOKENS * MLA_TOKEN_BYTES)
    q = draw_mla_rows(d.rows * d.h_q, MLA_Q_LOG2_RANGE, g).view(d.b, d.s_q, d.h_q, MLA_QK_DIM)
    return {"q": q, "cache": cache, "indices": draw_index_rows(d.rows, d.s_kv, d.topk, g).view(d.b, d.s_q, d.topk)}


def describe_mla_decode_draw(seed):
    return (f"dsa mla decode: torch {torch.__version__} torch.Generator(device={DEVICE!r}).manual_seed({seed}); the cache's "
            "latent rows as dsa_sparse_mla_prefill's kv, quantized to the 656-byte FP8 rows (REFERENCE_OPS.md "
            "dsa_sparse_mla_decode); then q; then per query topk of rand(s_kv) (distinct slots, random order)")


def mla_decode_reference(p, x):
    """fp32 out [b, s_q, h_q, 512] and lse [b, h_q, s_q] over the dequantized cache, as the prefill reference per query row."""
    d = MlaDecode.of(p)
    kv = mla_dequantize_rows(x["cache"].view(d.s_kv, MLA_TOKEN_BYTES))
    flat = {"q": x["q"].view(d.rows, d.h_q, MLA_QK_DIM), "kv": kv, "indices": x["indices"].view(d.rows, d.topk)}
    r = mla_prefill_reference({"s_q": d.rows, "s_kv": d.s_kv, "h_q": d.h_q, "topk": d.topk, "sm_scale": d.sm_scale}, flat)
    return {"out": r["out"].view(d.b, d.s_q, d.h_q, MLA_V_DIM),
            "lse": r["lse"].view(d.b, d.s_q, d.h_q).transpose(1, 2).contiguous()}


def mla_gather_attention(d, q, rows):
    """mla_torch_attention over FP8 cache rows (uint8 [tokens, 656]) gathered (index_select) and dequantized to bf16, for
    d's rows·h_q query rows; attend returns out bf16 [b, s_q, h_q, 512] and lse fp32 [b, h_q, s_q] (views)."""
    attend = mla_torch_attention(q, d.topk, d.sm_scale, lambda f: mla_dequantize_rows(rows.index_select(0, f)))

    def decode_layout(flat):
        out, lse = attend(flat)
        return out.view(d.b, d.s_q, d.h_q, MLA_V_DIM), lse.view(d.b, d.s_q, d.h_q).transpose(1, 2)
    return decode_layout


def mla_decode_torch(d, x):
    """torch-gather's timed call: mla_gather_attention over the case's index rows (flattened untimed)."""
    flat = x["indices"].long().reshape(-1)  # made untimed
    attend = mla_gather_attention(d, x["q"].view(d.rows, d.h_q, MLA_QK_DIM), x["cache"].view(d.s_kv, MLA_TOKEN_BYTES))
    return lambda: attend(flat)


def mla_decode_dense(d, x):
    """sdpa-dense's timed call: scaled_dot_product_attention of every query row over ALL s_kv dequantized tokens in
    MLA's absorbed (MQA) form: a sequence's s_q·h_q query rows as the rows of its one head, over the one latent head
    (V its first 512 dims; no expansion to h_q heads): what a dense MLA decode at the same context costs."""
    kv = mla_dequantize_rows(x["cache"].view(d.s_kv, MLA_TOKEN_BYTES))  # untimed
    k = kv.view(1, 1, d.s_kv, MLA_QK_DIM).expand(d.b, 1, d.s_kv, MLA_QK_DIM)
    v = kv[:, :MLA_V_DIM].view(1, 1, d.s_kv, MLA_V_DIM).expand(d.b, 1, d.s_kv, MLA_V_DIM)
    q = x["q"].reshape(d.b, 1, d.s_q * d.h_q, MLA_QK_DIM)

    def call():
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=d.sm_scale)
    return call


def mla_decode_baselines(p, x, references, plan):
    d = MlaDecode.of(p)

    def gather():
        call = mla_decode_torch(d, x)
        out, lse = call()
        return call, {"out": out, "lse": lse}

    def dense():
        call = mla_decode_dense(d, x)
        call()
        return call, {}
    gather_form = "index_select of the 656-byte rows per query chunk, dequantized to bf16; bf16 bmm, fp32 softmax, bf16 P·V"
    dense_form = ("dense SDPA over all s_kv tokens, a sequence's s_q·h_q rows as one head over the latent head (not the "
                  "sparse result, so not compared): the dense MLA decode's cost; TFLOP/s of the sparse count")
    return {"torch-gather": run_baseline("torch-gather", [Attempt(gather, gather_form)], references, plan, d.figure()),
            "sdpa-dense": run_baseline("sdpa-dense", [Attempt(dense, dense_form)], references, plan, d.figure())}


@dataclasses.dataclass(frozen=True)
class DsaStep:
    """A dsa_decode_step case: b sequences of context L (every one), s_q queries each; the indexer (h heads) scores every
    context position, the top-k keeps topk of them, and the sparse MLA decode (h_q heads) attends to their cache slots.
    Both caches are paged alike (64 tokens a page) and share one block table: slot = page · 64 + offset."""
    b: int
    s_q: int
    L: int
    h: int
    h_q: int
    topk: int
    sm_scale: float

    @staticmethod
    def of(p):
        d = DsaStep(b=int(p["b"]), s_q=int(p.get("s_q") or 1), L=int(p["L"]), h=int(p.get("h") or 64),
                    h_q=int(p.get("h_q") or 128), topk=int(p.get("topk") or 2048), sm_scale=float(p.get("sm_scale") or 0.135234))
        if min(d.b, d.s_q, d.L, d.h, d.h_q, d.topk) < 1 or d.topk > d.L - d.s_q + 1 or d.L % DSA_PAGE_TOKENS != 0 \
                or not (d.sm_scale > 0 and math.isfinite(d.sm_scale)):
            raise ValueError(f"bad dsa_decode_step params {p} (L a multiple of 64, topk <= L - s_q + 1, sm_scale > 0)")
        return d

    @property
    def index(self):
        return DsaDecode(b=self.b, L=self.L, h=self.h, next_n=self.s_q, k=self.topk, stage="indexer", hbm_read_bytes=HBM_READ_BYTES)

    @property
    def attention(self):
        return MlaDecode(b=self.b, s_q=self.s_q, s_kv=self.index.num_pages * MLA_PAGE_TOKENS, h_q=self.h_q, topk=self.topk,
                         sm_scale=self.sm_scale)

    @property
    def rows(self):
        return self.b * self.s_q

    def inputs(self):
        named = {"q": "index_q", "weights": "index_weights", "cache": "index_cache"}
        index = [(named.get(n, n), shape, dtype) for n, shape, dtype in self.index.inputs()]
        a = self.attention
        return index + [("q", [self.b, self.s_q, self.h_q, MLA_QK_DIM], torch.bfloat16),
                        ("mla_cache", [a.pages, MLA_PAGE_TOKENS * MLA_TOKEN_BYTES], torch.uint8)]

    def index_inputs(self, x):
        """The indexer's inputs under dsa_indexer_decode's names."""
        return {"q": x["index_q"], "weights": x["index_weights"], "cache": x["index_cache"], "block_table": x["block_table"],
                "context_lens": x["context_lens"]}

    def slots(self, x, positions):
        """Cache slots [rows, topk] (int64) of context positions [rows, topk] through each row's sequence's block table."""
        table = x["block_table"].long()[torch.arange(self.rows, device=positions.device) // self.s_q]
        return table.gather(1, positions // DSA_PAGE_TOKENS) * DSA_PAGE_TOKENS + positions % DSA_PAGE_TOKENS


def dsa_step_draw(p, g):
    """dsa_indexer_decode's draw (block table, index keys, index q, weights), then the MLA cache's latent rows for every
    page (as dsa_sparse_mla_decode's, quantized), then q."""
    d = DsaStep.of(p)
    x = dsa_decode_draw({"b": d.b, "L": d.L, "h": d.h, "next_n": d.s_q, "k": d.topk, "stage": "indexer"}, g)
    a = d.attention
    mla = mla_quantize_cache(draw_mla_rows(a.s_kv, MLA_KV_LOG2_RANGE, g)).view(a.pages, MLA_PAGE_TOKENS * MLA_TOKEN_BYTES)
    q = draw_mla_rows(d.rows * d.h_q, MLA_Q_LOG2_RANGE, g).view(d.b, d.s_q, d.h_q, MLA_QK_DIM)
    return {"index_q": x["q"], "index_weights": x["weights"], "index_cache": x["cache"], "block_table": x["block_table"],
            "context_lens": x["context_lens"], "q": q, "mla_cache": mla}


def describe_dsa_step_draw(seed):
    return (f"dsa decode step: torch {torch.__version__} torch.Generator(device={DEVICE!r}).manual_seed({seed}); "
            "dsa_indexer_decode's draw (block table randperm(pages), index keys per sequence, index q, weights), then "
            "every page's MLA latent rows as dsa_sparse_mla_decode's cache, then q")


def dsa_step_attention(d, x, slots):
    """fp32 out [b, s_q, h_q, 512] and lse [b, h_q, s_q] of sparse MLA over cache slots [rows, topk] (int64, all valid),
    as dsa_sparse_mla_decode's reference (only the selected rows dequantized)."""
    a = d.attention
    if bool(((slots < 0) | (slots >= a.s_kv)).any()):
        raise ValueError(f"slots must lie in [0, {a.s_kv}) (every context holds topk positions)")
    used, inverse = torch.unique(slots.reshape(-1), return_inverse=True)
    kv = mla_dequantize_rows(x["mla_cache"].view(a.s_kv, MLA_TOKEN_BYTES).index_select(0, used))
    flat = {"q": x["q"].view(d.rows, d.h_q, MLA_QK_DIM), "kv": kv, "indices": inverse.view(d.rows, d.topk).int()}
    r = mla_prefill_reference({"s_q": d.rows, "s_kv": kv.shape[0], "h_q": d.h_q, "topk": d.topk, "sm_scale": d.sm_scale}, flat)
    return r["out"].view(d.b, d.s_q, d.h_q, MLA_V_DIM), r["lse"].view(d.b, d.s_q, d.h_q).transpose(1, 2).contiguous()


def dsa_step_reference(p, x):
    """fp32 logits [rows, L] (dsa_indexer_decode's), and out/lse over the slots of their top-k positions (torch.topk)."""
    d = DsaStep.of(p)
    logits = dsa_decode_logits(d.index, d.index_inputs(x))
    out, lse = dsa_step_attention(d, x, d.slots(x, torch.topk(logits, d.topk, dim=-1).indices))
    return {"logits": logits, "out": out, "lse": lse}


def dsa_step_check_reference(case, aux, options):
    """At check time: the prepare-time logits, and out/lse over OUR slots (aux `slots` int32 [rows, topk]) — whether
    those are the top-k of our logits our side checks exactly, and our logits are checked against the reference here."""
    d = DsaStep.of(case.params)
    slots = aux["slots"].to(DEVICE).long()
    if list(slots.shape) != [d.rows, d.topk]:
        raise ValueError(f"aux slots: {list(slots.shape)}, the op needs [{d.rows}, {d.topk}]")
    out, lse = dsa_step_attention(d, case.inputs, slots)
    return {"logits": case.references["logits"], "out": out, "lse": lse}, {}


def dsa_step_torch(d, x):
    """torch's step: the fp8-tensorwise indexer form (fp32 logits; each sequence's keys made contiguous untimed, as in
    dsa_indexer_decode), torch.topk, the positions' slots through the block table, then mla_gather_attention."""
    logits = dsa_decode_torch_logits(d.index, d.index_inputs(x), "fp8-tensorwise")
    table = x["block_table"].long()[torch.arange(d.rows, device=DEVICE) // d.s_q]  # made untimed
    a = d.attention
    attend = mla_gather_attention(a, x["q"].view(d.rows, d.h_q, MLA_QK_DIM), x["mla_cache"].view(a.s_kv, MLA_TOKEN_BYTES))

    def call():
        lg = logits()
        positions = torch.topk(lg, d.topk, dim=-1).indices
        slots = table.gather(1, positions // DSA_PAGE_TOKENS) * DSA_PAGE_TOKENS + positions % DSA_PAGE_TOKENS
        out, lse = attend(slots.reshape(-1))
        return lg, out, lse, slots
    return call


def graphed(call):
    """`call` captured once as a CUDA graph, after warm-up calls on a side stream (torch's recipe: lazily made
    workspaces exist before the capture): the replay and the graph's output tensors."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = call()

    def replay():
        graph.replay()
        return outputs
    return replay


def dsa_step_baselines(p, x, references, plan):
    """torch's step eagerly and as one CUDA graph. Like ours, each is judged on its own selection: its logits against the
    reference's, its out/lse against the reference attention over ITS slots (the references its setup fills)."""
    d = DsaStep.of(p)

    def baseline(name, graph, form):
        own = {"logits": references["logits"]}

        def setup():
            call = dsa_step_torch(d, x)
            call = graphed(call) if graph else call
            lg, out, lse, slots = call()
            own["out"], own["lse"] = dsa_step_attention(d, x, slots)
            return call, {"logits": lg.float(), "out": out, "lse": lse}
        return run_baseline(name, [Attempt(setup, form)], own, plan, lambda ms: {})  # a step's result is its time
    form = ("fp8-tensorwise indexer (keys contiguous per sequence, untimed), torch.topk, slots through the block table, "
            "index_select of the 656-byte rows, bf16 bmm, fp32 softmax, bf16 P·V")
    out = {"torch-gather": baseline("torch-gather", False, form)}
    if int(p.get("graph", 1)):
        out["torch-gather-graph"] = baseline("torch-gather-graph", True, form + "; one CUDA graph")
    return out


# ---------------------------------------------------------------------------------------------
# The ops (REFERENCE_OPS.md): inputs (name, shape, dtype) in drawing order, reference, baselines

def permute_spec(p):
    return torch_dtype(p["dtype"]), int_list(p["shape"], "x"), int_list(p["perm"])


def permute_inputs(p):
    dtype, shape, _ = permute_spec(p)
    return [("x", shape, dtype)]


def permute_reference(p, x):
    _, _, perm = permute_spec(p)
    return {"y": x["x"].permute(perm).contiguous()}  # exact: kept in the dtype


def permute_baselines(p, x, references, plan):
    _, _, perm = permute_spec(p)
    src = x["x"]
    figure = gbps_figure(2 * src.numel() * src.element_size())

    def contiguous():
        def call():
            return src.permute(perm).contiguous()
        return call, {"y": call()}

    def copy():
        dst = torch.empty_like(src)
        return (lambda: dst.copy_(src)), {}
    return {"torch-contiguous": run_baseline("torch-contiguous", [Attempt(contiguous)], references, plan, figure),
            "torch-copy": run_baseline("torch-copy", [Attempt(copy)], references, plan, figure)}


def gemm_spec(p):
    layout = str(p.get("layout") or "tt")
    if len(layout) != 2 or any(c not in "tn" for c in layout):
        raise ValueError(f"gemm layout must be two of t/n, not {layout!r}")
    return torch_dtype(p["dtype"]), int(p["m"]), int(p["n"]), int(p["k"]), layout


def gemm_inputs(p):
    dtype, m, n, k, layout = gemm_spec(p)
    return [("a", [m, k] if layout[0] == "t" else [k, m], dtype), ("b", [k, n] if layout[1] == "t" else [n, k], dtype)]


def gemm_operands(p, x):
    """A (m, k) and B (k, n) as views of the stored tensors (column-major: a transposed view)."""
    _, _, _, _, layout = gemm_spec(p)
    a, b = x["a"], x["b"]
    return (a if layout[0] == "t" else a.t()), (b if layout[1] == "t" else b.t())


def gemm_reference(p, x):
    a, b = gemm_operands(p, x)
    return {"c": torch.matmul(a.float(), b.float())}


def with_pitch(stored, pitch):
    """The stored (rows, cols) operand as a view of a (rows, pitch) buffer: cuBLAS gets the pitch."""
    if pitch is None or int(pitch) == stored.shape[1]:
        return stored
    if int(pitch) < stored.shape[1]:
        raise ValueError(f"pitch {pitch} < {stored.shape[1]} columns")
    wide = torch.zeros((stored.shape[0], int(pitch)), dtype=stored.dtype, device=stored.device)
    wide[:, :stored.shape[1]] = stored
    return wide[:, :stored.shape[1]]


def gemm_baselines(p, x, references, plan):
    _, m, n, k, _ = gemm_spec(p)
    lda, ldb = p.get("lda"), p.get("ldb")
    pitches = ", ".join(f"{name} {v}" for name, v in (("lda", lda), ("ldb", ldb)) if v is not None)
    form = f"{pitches} (views of wider buffers)" if pitches else None

    def matmul():
        a, b = gemm_operands(p, {"a": with_pitch(x["a"], lda), "b": with_pitch(x["b"], ldb)})

        def call():
            return torch.matmul(a, b)
        return call, {"c": call()}
    return {"torch-matmul": run_baseline("torch-matmul", [Attempt(matmul, form)], references, plan, tflops_figure(2 * m * n * k))}


def attention_fwd_inputs(p):
    a = Attention.of(p)
    return [(name, a.shapes()[name], a.dtype) for name in "qkv"]


def attention_bwd_inputs(p):
    a = Attention.of(p)
    return attention_fwd_inputs(p) + [("do", a.shapes()["o"], a.dtype)]


def sparge_check_reference(case, aux, options):
    a = Attention.of(case.params)
    if a.layout != "bhsd":
        raise ValueError(f"sparge inputs are bhsd, not {a.layout}")
    check = SpargeCheck.of(case.params, options, a.h, a.d)
    if "block_map" not in aux:
        raise ValueError("sparge check needs aux block_map")
    q, k, v = case.inputs["q"], case.inputs["k"], case.inputs["v"]
    o, excuse = sparge_reference(q, k, v, aux["block_map"], check, aux.get("q_dequant"), aux.get("k_dequant"))
    return {"o": o}, ({} if excuse is None else {"o": excuse})


@dataclasses.dataclass(frozen=True)
class Op:
    inputs: Callable  # params -> [(name, shape, torch dtype)] in drawing order
    reference: Callable  # (params, inputs) -> {output: fp32 reference}
    baselines: Callable  # (params, inputs, references, plan) -> {name: BaselineReply}
    check_reference: Optional[Callable] = None  # (case, aux, options) -> {output: reference}; default: prepare's
    # Inputs with structure (DSA: e4m3 bytes, a paged cache): (params, generator) -> {name: tensor} drawn
    # from the case's generator in the op's documented order, instead of one randn per input; and the
    # generator's description for the record ((seed) -> str).
    draw: Optional[Callable] = None
    describe_draw: Optional[Callable] = None


RUNNERS = {
    "permute": Op(permute_inputs, permute_reference, permute_baselines),
    "gemm": Op(gemm_inputs, gemm_reference, gemm_baselines),
    "attention_fwd": Op(attention_fwd_inputs, lambda p, x: attention_reference(Attention.of(p), x),
                        lambda p, x, r, plan: attention_baselines(Attention.of(p), x, r, plan, backward=False)),
    "attention_bwd": Op(attention_bwd_inputs, lambda p, x: attention_bwd_reference(Attention.of(p), x),
                        lambda p, x, r, plan: attention_baselines(Attention.of(p), x, r, plan, backward=True)),
    "sparge": Op(attention_fwd_inputs, lambda p, x: attention_reference(Attention.of(p), x),
                 lambda p, x, r, plan: attention_baselines(Attention.of(p), x, r, plan, backward=False),
                 check_reference=sparge_check_reference),
    "dsa_indexer_decode": Op(lambda p: DsaDecode.of(p).inputs(), dsa_decode_reference, dsa_decode_baselines,
                             draw=dsa_decode_draw, describe_draw=describe_dsa_draw(
                                 "block table randperm(pages), keys per sequence, q, weights; topk stage: their fp32 logits")),
    "dsa_indexer_prefill": Op(lambda p: DsaPrefill.of(p).inputs(), dsa_prefill_reference, dsa_prefill_baselines,
                              draw=dsa_prefill_draw, describe_draw=describe_dsa_draw("keys, q, weights; causal windows")),
    "dsa_sparse_mla_prefill": Op(lambda p: MlaPrefill.of(p).inputs(), mla_prefill_reference, mla_prefill_baselines,
                                 draw=mla_prefill_draw, describe_draw=describe_mla_draw),
    "dsa_sparse_mla_decode": Op(lambda p: MlaDecode.of(p).inputs(), mla_decode_reference, mla_decode_baselines,
                                draw=mla_decode_draw, describe_draw=describe_mla_decode_draw),
    "dsa_decode_step": Op(lambda p: DsaStep.of(p).inputs(), dsa_step_reference, dsa_step_baselines,
                          check_reference=dsa_step_check_reference, draw=dsa_step_draw, describe_draw=describe_dsa_step_draw),
}


# ---------------------------------------------------------------------------------------------
# Requests

@dataclasses.dataclass
class Case:
    op: str
    params: dict
    dir: str
    references: dict
    inputs: Optional[dict]  # kept only for ops whose check builds its own reference


def generator_name(seed):
    return (f"normal: torch {torch.__version__} randn(float32, torch.Generator(device={DEVICE!r}).manual_seed({seed})) "
            "rounded to the dtype, inputs drawn in REFERENCE_OPS.md order")


def check_input(name, tensor, shape, dtype, what):
    if list(tensor.shape) != list(shape) or tensor.dtype != dtype:
        raise ValueError(f"input {name}: {dtype_name(tensor.dtype)} {list(tensor.shape)} {what}, "
                         f"the op needs {dtype_name(dtype)} {list(shape)}")


def make_inputs(specs, source, directory, op=None, params=None):
    """The inputs as tensors on DEVICE and PrepareReply.inputs (`op.draw` draws structured inputs)."""
    if source["source"] == "normal":
        seed = int(source["seed"])
        g = torch.Generator(device=DEVICE).manual_seed(seed)
        tensors, files = {}, {}
        drawn = op.draw(params, g) if op is not None and op.draw is not None else None
        for name, shape, dtype in specs:
            if drawn is None:
                tensors[name] = torch.randn(shape, dtype=torch.float32, generator=g, device=DEVICE).to(dtype)
            else:
                tensors[name] = drawn.pop(name)
                check_input(name, tensors[name], shape, dtype, "drawn")
            files[name] = write_tensor(directory, name, tensors[name])
        if drawn:
            raise ValueError(f"drawn inputs {sorted(drawn)} are not the op's")
        described = op.describe_draw(seed) if drawn is not None else generator_name(seed)
        return tensors, {"generator": described, "seed": seed, "tensors": files}
    if source["source"] != "files":
        raise ValueError(f"unknown input source {source['source']!r}")
    tensors = {}
    for name, shape, dtype in specs:
        if name not in source["tensors"]:
            raise ValueError(f"input {name} is missing from the files")
        tensors[name] = read_tensor(directory, source["tensors"][name])
        check_input(name, tensors[name], shape, dtype, "in the files")
    return tensors, {"generator": source["generator"], "seed": source["seed"], "tensors": source["tensors"]}


def drop_cases(cases, reason):
    for name in list(cases):
        log(f"freeing case {name} ({reason})")
        del cases[name]
    free_memory()


def handle_prepare(request, cases):
    drop_cases(cases, "a new prepare came before its check")
    name, params = request["case"], request.get("params") or {}
    if request["op"] not in RUNNERS:
        raise ValueError(f"unknown op {request['op']!r} (one of {', '.join(RUNNERS)})")
    op, plan = RUNNERS[request["op"]], timing_plan(request)
    started = time.time()
    inputs, inputs_reply = make_inputs(op.inputs(params), request["inputs"], request["dir"], op, params)
    with torch.no_grad():
        references = op.reference(params, inputs)
    reference = {out: reference_stats(t) for out, t in references.items()}
    log(f"{name}: {request['op']} inputs and reference in {time.time() - started:.1f} s")
    baselines = op.baselines(params, inputs, references, plan)
    cases[name] = Case(request["op"], params, request["dir"], references, inputs if op.check_reference else None)
    del inputs
    free_memory()
    return {"inputs": inputs_reply, "baselines": baselines, "reference": reference}


def handle_check(request, cases):
    if request["case"] not in cases:
        raise ValueError(f"case {request['case']!r} was not prepared (or was checked already)")
    case = cases.pop(request["case"])  # freed when this returns (answer() then empties the cache), also on failure
    with torch.no_grad():
        aux = {n: read_tensor(case.dir, spec) for n, spec in (request.get("aux") or {}).items()}
        check_reference = RUNNERS[case.op].check_reference
        references, excuses = (case.references, {}) if check_reference is None else check_reference(case, aux, request.get("options"))
        outputs = request.get("outputs") or {}
        if sorted(outputs) != sorted(references):
            raise ValueError(f"outputs {sorted(outputs)}, the op validates {sorted(references)}")
        errors = {n: error_stats(read_tensor(case.dir, spec), references[n], excuses.get(n)) for n, spec in outputs.items()}
        reference = {n: reference_stats(t) for n, t in references.items()}
        excused = {n: {"maxExcuse": float(e.max()) if e.numel() else 0.0, "elements": int((e > 0).sum())} for n, e in excuses.items()}
    log(f"{request['case']}: checked " + ", ".join(f"{n} maxAbs {e['maxAbs']:.3g} rms {e['rms']:.3g}" for n, e in errors.items()))
    return {"errors": errors, "reference": reference, **({"excused": excused} if excused else {})}


def nvidia_smi():
    """Driver, current and max SM clock (MHz), power limit (W) of this process's GPU (by UUID when
    torch knows it, else nvidia-smi's first GPU); zeros and "unknown" without nvidia-smi."""
    fields = {"driver": "unknown", "smClockMHz": 0, "smClockMaxMHz": 0, "powerLimitW": 0}
    command = ["nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.max.sm,power.limit", "--format=csv,noheader,nounits"]
    try:
        uuid = torch.cuda.get_device_properties(torch.device(DEVICE)).uuid if ON_GPU else None
    except Exception:  # older torch: no uuid
        uuid = None
    values = None
    for extra in ([f"--id=GPU-{uuid}"], []) if uuid else ([],):
        try:
            out = subprocess.run(command + extra, capture_output=True, text=True, timeout=30, check=True).stdout
            values = [v.strip() for v in out.strip().splitlines()[0].split(",")]
            break
        except Exception as error:  # no nvidia-smi: recorded as unknown
            log(f"nvidia-smi {' '.join(extra)}: {describe(error)}")
    if values is None:
        return fields

    def number(text):
        try:
            return float(text)
        except ValueError:  # [N/A]
            return 0
    fields["driver"] = values[0] or "unknown"
    for key, text in zip(("smClockMHz", "smClockMaxMHz", "powerLimitW"), values[1:]):
        fields[key] = number(text)
    return fields


def under_load(query, warmup_s=0.3):
    """query()'s result, run while the GPU multiplies fp16 matrices: the SM clock it reads is the
    clock under load (an idle card reports its idle clock)."""
    if not ON_GPU:
        return query()
    a = torch.randn(4096, 4096, device=DEVICE).half()
    result = {}
    worker = threading.Thread(target=lambda: result.update(query()))
    started = time.time()
    while not result and (worker.ident is None or worker.is_alive()):
        for _ in range(20):
            torch.matmul(a, a)
        torch.cuda.synchronize()
        if worker.ident is None and time.time() - started > warmup_s:
            worker.start()
    worker.join()
    return result


def handle_hello(request, cases):
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    provenance = {
        "device": torch.cuda.get_device_name(torch.device(DEVICE)) if ON_GPU else "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "none",
        "cudnn": str(cudnn) if cudnn else "none",
        **under_load(nvidia_smi),
    }
    return {"provenance": provenance}


HANDLERS = {"hello": handle_hello, "prepare": handle_prepare, "check": handle_check}


def json_safe(value):
    """Non-finite floats as JSON can carry them: +-Infinity as +-1e999 (via a token), NaN as null."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else (_INF_TOKEN if value > 0 else "-" + _INF_TOKEN)
    return value


def encode_reply(reply):
    text = json.dumps(json_safe(reply), allow_nan=False)
    return text.replace(f'"-{_INF_TOKEN}"', "-1e999").replace(f'"{_INF_TOKEN}"', "1e999")


def answer(line, cases):
    try:
        request = json.loads(line)
        if request.get("cmd") not in HANDLERS:
            raise ValueError(f"unknown cmd {request.get('cmd')!r}")
        return {"ok": True, **HANDLERS[request["cmd"]](request, cases)}
    except Exception as error:  # the server keeps serving
        trace = traceback.format_exc()
        log(trace.rstrip())
        frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        where = f" (at {os.path.basename(frame.filename)}:{frame.lineno} in {frame.name})" if frame else ""
        return {"ok": False, "error": trace.strip().splitlines()[-1] + where}
    finally:
        free_memory()


def serve():
    # Replies alone on the real stdout: anything else printed (python or native code) goes to stderr.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    cases = {}
    log(f"serving on {DEVICE} (torch {torch.__version__})")
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        try:
            text = encode_reply(answer(line, cases))
        except Exception as error:  # a reply JSON cannot carry is still answered
            text = encode_reply({"ok": False, "error": f"reply not serializable: {describe(error)}"})
        replies.write(REPLY_MARKER + text + "\n")
        replies.flush()
    log("stdin closed: exiting")


def main(argv):
    if argv[1:] != ["--serve"]:
        print(__doc__, file=sys.stderr)
        return 2
    serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
