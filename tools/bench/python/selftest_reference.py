"""Self-test of the torch reference server (torch_reference.py --serve) on tiny shapes of every op.

usage: python3 tools/bench/python/selftest_reference.py [-v] [--only=PREFIX[,PREFIX...]]

Starts the server as a subprocess (on the GPU by default; TILEKIT_REFERENCE_DEVICE=cpu runs both on
the CPU, where the SDPA baselines only record their errors) and checks, per case:
  - prepare replies are well-formed (input files, reference stats, baselines: an error string or a
    timing with msMin <= ms <= msMax, errors per output) and the same seed gives the same input bytes;
  - the fp32 reference, rounded to the dtype and fed back as "ours", has an error of the rounding's
    size, far below the same output scaled by 1.01;
  - the server's reference agrees with a plain fp64 evaluation written here (attention: one softmax
    over the whole row; sparge: a line-by-line port of spargeReference.ts's PV-skip model);
  - sparge: an all-ones block map with pv_mode none checks against the dense reference, pv_mode
    block with pv_threshold 1e9 equals pv_mode none, skipping modes differ from the masked reference;
  - dsa_indexer_decode / dsa_indexer_prefill: the drawn inputs' structure (block table, spare page,
    per-row scales mapping each row's amax to ±448, causal windows), the references against fp64
    evaluations that read the cache bytes here, −∞ masks (a masked element written finite, or a
    window element written −∞, is Infinity), the top-k values, wrong outputs (a dropped key tile, a
    wrong selection) standing out, hbm-read's GB/s;
  - dsa_sparse_mla_prefill: distinct in-range index rows, bf16 q and kv rows of the drawn magnitudes, the
    reference (out, lse) against an fp64 evaluation written here, torch-gather's TFLOP/s and error, a dropped
    token and swapped heads standing out;
  - on the GPU, torch's baselines stay within a few percent (rms) of the reference;
  - error replies (unknown cmd or case) keep the server alive; NaN in ours gives Infinity; EOF exits.
Prints one PASS/FAIL line per check and exits 1 when any check fails. --only runs the cases whose
labels start with one of the prefixes (e.g. --only=dsa).
"""
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import torch_reference as ref  # noqa: E402  (the helpers the server itself uses for files)

PLAN = {"warmup": 1, "repetitions": 3, "targetMs": 1, "minLaunches": 2, "maxLaunches": 50, "flushL2": False}
# Half an ulp, relative: what rounding an fp32 value to the dtype may change it by.
ROUNDING = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24}
VERBOSE = "-v" in sys.argv[1:]
FAILURES = []


def report(name, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        FAILURES.append(name)
    return ok


class Server:
    def __init__(self, workdir):
        self.log_path = os.path.join(workdir, "server.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "torch_reference.py"), "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=None if VERBOSE else self.log, text=True)

    def request(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited (log: {self.log_path})")
            if line.startswith(ref.REPLY_MARKER):
                return json.loads(line[len(ref.REPLY_MARKER):])
            print(f"  (server stdout, not a reply) {line.rstrip()}")

    def close(self):
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None


# ---------------------------------------------------------------------------------------------
# Shape checks of the replies

def timing_ok(t):
    reps = t.get("reps", [])
    return (len(reps) == PLAN["repetitions"] and PLAN["minLaunches"] <= t["launchesPerRep"] <= PLAN["maxLaunches"]
            and t["msMin"] <= t["ms"] <= t["msMax"] and t["msMin"] == min(reps) and t["msMax"] == max(reps) and t["msMin"] >= 0)


def stats_ok(s):
    return math.isfinite(s["maxAbs"]) and math.isfinite(s["rms"]) and 0 <= s["rms"] <= s["maxAbs"] * (1 + 1e-9)


def check_prepare(label, reply, directory, input_names, output_names, figure=True):
    """`figure`: whether the baselines report a figure of merit (a decode step's result is its time)."""
    if not report(f"{label} prepare ok", reply.get("ok") is True, reply.get("error", "")):
        return False
    tensors = reply["inputs"]["tensors"]
    files_ok = sorted(tensors) == sorted(input_names) and all(
        os.path.getsize(os.path.join(directory, f["file"])) == math.prod(f["shape"]) * ref.DTYPES[f["dtype"]][2]().itemsize
        for f in tensors.values())
    described = isinstance(reply["inputs"]["generator"], str) and isinstance(reply["inputs"]["seed"], int)
    report(f"{label} prepare inputs", files_ok and described,
           json.dumps(tensors))
    report(f"{label} prepare reference stats",
           sorted(reply["reference"]) == sorted(output_names) and all(map(stats_ok, reply["reference"].values())),
           json.dumps(reply["reference"]))
    problems = []
    for name, b in reply["baselines"].items():
        if "error" in b:
            if not (isinstance(b["error"], str) and b["error"] and len(b) == 1):
                problems.append(f"{name}: malformed error")
            continue
        if not timing_ok(b):
            problems.append(f"{name}: timing {b}")
        if (b["ms"] < ref.SHORT_CASE_MS or PLAN["flushL2"]) and not ("flushed" in b and timing_ok(b["flushed"])):
            problems.append(f"{name}: flushed timing missing or malformed")
        if not set(b["errors"]) <= set(output_names) or not all(map(stats_ok, b["errors"].values())):
            problems.append(f"{name}: errors {b['errors']}")
        if figure and b["ms"] > 0 and not any(b.get(f, 0) > 0 for f in ("tflops", "gbps")):
            problems.append(f"{name}: no figure of merit")
    report(f"{label} prepare baselines well-formed", bool(reply["baselines"]) and not problems, "; ".join(problems))
    ran = [n for n, b in reply["baselines"].items() if "error" not in b]
    print(f"  {label} baselines run: {', '.join(ran) or 'none'}; errors: "
          + "; ".join(f"{n}: {b['error']}" for n, b in reply["baselines"].items() if "error" in b))
    return True


# ---------------------------------------------------------------------------------------------
# Independent fp64 evaluations

def naive_attention(q, k, v, causal, scale, top_left=False, mask=None):
    """fp64 softmax(scale·q·kᵀ)·v of (h, sq, d) x (hk, sk, d): GQA by repeating K/V heads, the whole row at once; empty rows give 0."""
    h, hk = q.shape[0], k.shape[0]
    k, v = k.double().repeat_interleave(h // hk, 0), v.double().repeat_interleave(h // hk, 0)
    s = torch.matmul(q.double(), k.transpose(1, 2)) * scale
    sq, sk = s.shape[-2], s.shape[-1]
    keep = torch.ones((sq, sk), dtype=torch.bool, device=s.device) if mask is None else mask
    if causal:
        rows = torch.arange(sq, device=s.device)[:, None] + (0 if top_left else sk - sq)
        keep = keep & (torch.arange(sk, device=s.device)[None, :] <= rows)
    p = torch.softmax(s.masked_fill(~keep, -math.inf), dim=-1).nan_to_num(0.0)
    return torch.matmul(p, v)


def naive_attention_case(a, x):
    """Per sequence, naive_attention in the layout of o; backward by fp64 autograd of Σ o·do."""
    leaves = {n: x[n].double().requires_grad_() for n in "qkv"}
    per_seq = zip(a.views(leaves["q"], "q"), a.views(leaves["k"], "k"), a.views(leaves["v"], "k"), a.seqs)
    outs = {i: naive_attention(qi, ki, vi, a.causal, a.scale) for i, (qi, ki, vi, (sq, sk)) in enumerate(per_seq) if sq and sk}
    if "do" in x:
        do = a.views(x["do"].double(), "q")
        loss = sum((oi * do[i]).sum() for i, oi in outs.items())
        return dict(zip(("dq", "dk", "dv"), torch.autograd.grad(loss, (leaves["q"], leaves["k"], leaves["v"]))))
    o = torch.zeros(a.shapes()["o"], dtype=torch.float64, device=x["q"].device)
    o_views = a.views(o, "q")
    with torch.no_grad():
        for i, oi in outs.items():
            o_views[i].copy_(oi)
    return {"o": o}


def naive_reference(op, params, x):
    if op == "permute":
        _, _, perm = ref.permute_spec(params)
        return {"y": torch.from_numpy(np.ascontiguousarray(np.transpose(x["x"].float().cpu().numpy(), perm)))}
    if op == "gemm":
        a, b = ref.gemm_operands(params, x)
        return {"c": torch.matmul(a.double(), b.double())}
    return naive_attention_case(ref.Attention.of(params), x)


def naive_sparge(q, k, v, block_map, c, q_dequant=None, k_dequant=None):
    """A line-by-line port of spargePvSkipAttentionReference (kernels/sparge/src/spargeReference.ts), fp64.
    Returns O (b, h, sq, dv) and the number of skipped (visited block, vote group) pairs."""
    qs = (q if q_dequant is None else q_dequant).double().cpu()
    ks = (k if k_dequant is None else k_dequant).double().cpu()
    v = v.double().cpu()
    block_map = block_map.cpu()
    batch, nhead, sq, _ = q.shape
    nhead_k, sk, dv = k.shape[1], k.shape[2], v.shape[-1]
    bq, bk = c.block_q, c.block_k
    group = bq if c.pv_mode == "block" else c.warp_rows if c.pv_mode == "warp" else 1
    o = torch.zeros((batch, nhead, sq, dv), dtype=torch.float64)
    skipped = 0
    for b in range(batch):
        for h in range(nhead):
            kvh, pv = h // (nhead // nhead_k), c.thresholds[h]
            for i in range(block_map.shape[2]):
                row0 = i * bq
                rows = min(bq, sq - row0)
                visited = [j for j in range(block_map.shape[3]) if block_map[b, h, i, j] == 1]
                m, l = [-math.inf] * rows, [0.0] * rows
                acc = torch.zeros((rows, dv), dtype=torch.float64)
                for position, j in enumerate(visited):
                    first = j * bk
                    cols = min(bk, sk - first)
                    t = torch.matmul(qs[b, h, row0:row0 + rows], ks[b, kvh, first:first + cols].T) * c.scale * math.log2(math.e)
                    delta = [0.0] * rows
                    for r in range(rows):
                        if c.causal:
                            t[r, max(0, row0 + r + 1 - first):] = -math.inf
                        m_loc = float(t[r].max())
                        delta[r] = -math.inf if m_loc == -math.inf else m_loc - m[r]
                        m_new = max(m[r], m_loc)
                        if m_new != -math.inf and m[r] != m_new:
                            factor = 2.0 ** (m[r] - m_new)
                            l[r] *= factor
                            acc[r] *= factor
                        m[r] = m_new
                    eligible = c.pv_mode != "none" and position < len(visited) - c.tail
                    for g0 in range(0, rows, group):
                        g1 = min(rows, g0 + group)
                        vote = max(delta[g0:g1])
                        compute = not eligible or pv == math.inf or vote + pv > 0
                        skipped += 0 if compute else 1
                        for r in range(g0, g1):
                            if m[r] == -math.inf:
                                continue
                            p = torch.pow(2.0, t[r] - m[r])
                            if compute or c.in_denominator:
                                l[r] += float(p.sum())
                            if compute:
                                acc[r] += torch.matmul(p, v[b, kvh, first:first + cols])
                for r in range(rows):
                    if l[r] > 0:
                        o[b, h, row0 + r] = acc[r] / l[r]
    return o, skipped


# ---------------------------------------------------------------------------------------------
# The cases

def dtype_of(op, params, x):
    return ref.dtype_name(x["x"].dtype) if op == "permute" else params["dtype"]


def write_ours(directory, outputs, dtype, factor=1.0, prefix="ours"):
    return {n: ref.write_tensor(directory, f"{prefix}.{n}", (t.double() * factor).to(ref.torch_dtype(dtype))) for n, t in outputs.items()}


@contextlib.contextmanager
def small_chunks():
    """The server's chunk sizes made tiny, so that tiny shapes take the many-chunk paths of big ones."""
    saved = ref.SCORE_ELEMENTS, ref.ERROR_CHUNK
    ref.SCORE_ELEMENTS, ref.ERROR_CHUNK = 300, 7
    try:
        yield
    finally:
        ref.SCORE_ELEMENTS, ref.ERROR_CHUNK = saved


def same_tensors(a, b, rel=1e-6):
    return all(float((a[n].double() - b[n].double()).abs().max()) <= rel * max(float(a[n].abs().max()), 1e-30) for n in a)


def same_masked_tensors(a, b, rel=1e-6):
    """Like same_tensors, for outputs with −∞ masks: the same −∞ positions, finite parts within rel of the largest."""
    def one(x, y):
        x, y = x.double().cpu(), y.double().cpu()
        masked = torch.isneginf(x)
        if not torch.equal(masked, torch.isneginf(y)):
            return False
        finite = ~masked
        if not bool(finite.any()):
            return True
        return float((x[finite] - y[finite]).abs().max()) <= rel * max(float(x[finite].abs().max()), 1e-30)
    return all(one(a[n], b[n]) for n in a)


def close_rel(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def rounding_checks(label, dtype, reference, errors_round, errors_bad):
    for n, want in reference.items():
        bound = ROUNDING[dtype] * want["maxAbs"] + 1e-7
        report(f"{label} {n}: rounded reference checks at rounding size", errors_round[n]["maxAbs"] <= bound,
               f"maxAbs {errors_round[n]['maxAbs']:.3g} <= {bound:.3g}")
        report(f"{label} {n}: 1% scale error stands out", errors_bad[n]["rms"] > max(3 * errors_round[n]["rms"], 1e-3 * want["rms"]),
               f"rms {errors_bad[n]['rms']:.3g} vs rounded {errors_round[n]['rms']:.3g}")


def run_case(server, workdir, label, op, params, seed=1, torch_agrees=True):
    """Two prepares (same seed: same bytes), the rounded reference and a 1%-scaled one as ours, the naive evaluation."""
    dirs = [os.path.join(workdir, f"{label}.{i}") for i in range(2)]
    replies = []
    for directory in dirs:
        os.makedirs(directory)
        replies.append(server.request({"cmd": "prepare", "case": label, "op": op, "params": params, "dir": directory,
                                       "inputs": {"source": "normal", "seed": seed}, "timing": PLAN}))
    input_names = [n for n, _, _ in ref.RUNNERS[op].inputs(params)]
    x = {n: ref.read_tensor(dirs[0], f) for n, f in replies[0].get("inputs", {}).get("tensors", {}).items()}
    output_names = list(ref.RUNNERS[op].reference(params, x)) if x else []
    if not check_prepare(label, replies[0], dirs[0], input_names, output_names):
        server.request({"cmd": "check", "case": label, "outputs": {}})
        return
    same = all(open(os.path.join(dirs[0], f["file"]), "rb").read() == open(os.path.join(dirs[1], f["file"]), "rb").read()
               for f in replies[0]["inputs"]["tensors"].values())
    report(f"{label} same seed, same input bytes", same)
    with torch.no_grad():
        reference = ref.RUNNERS[op].reference(params, x)
    dtype = dtype_of(op, params, x)
    rounded = {n: t.to(ref.torch_dtype(dtype)) for n, t in reference.items()}
    errors = {n: ref.error_stats(rounded[n], reference[n]) for n in reference}
    with torch.no_grad(), small_chunks():
        chunked = ref.RUNNERS[op].reference(params, x)
        chunked_errors = {n: ref.error_stats(rounded[n], reference[n]) for n in reference}
    report(f"{label} reference in many chunks = in one", same_tensors(chunked, reference))
    report(f"{label} error stats in many chunks = in one",
           all(close_rel(errors[n][s], chunked_errors[n][s], 1e-9) for n in errors for s in ("maxAbs", "rms")),
           f"{errors} vs {chunked_errors}")
    ours = write_ours(dirs[1], reference, dtype)
    bad = write_ours(dirs[1], reference, dtype, 1.01, prefix="scaled")
    # The second prepare is the live one now (a new prepare frees an unchecked case).
    check_round = server.request({"cmd": "check", "case": label, "outputs": ours})
    report(f"{label} check ok", check_round.get("ok") is True, check_round.get("error", ""))
    server.request({"cmd": "prepare", "case": label, "op": op, "params": params, "dir": dirs[1],
                    "inputs": {"source": "normal", "seed": seed}, "timing": PLAN})
    check_bad = server.request({"cmd": "check", "case": label, "outputs": bad})
    if check_round.get("ok") and check_bad.get("ok"):
        rounding_checks(label, dtype, replies[0]["reference"], check_round["errors"], check_bad["errors"])
        report(f"{label} check reference = prepare reference", all(
            close_rel(check_round["reference"][n][s], replies[0]["reference"][n][s], 1e-9)
            for n in output_names for s in ("maxAbs", "rms")))
    naive = naive_reference(op, params, x)
    for n in output_names:
        diff = float((reference[n].double().cpu() - naive[n].double().cpu()).abs().max())
        scale = float(naive[n].abs().max()) or 1.0
        report(f"{label} {n}: reference = plain fp64 evaluation", diff <= 2e-5 * scale, f"max diff {diff:.3g} (max {scale:.3g})")
    if torch_agrees and ref.ON_GPU:
        # torch's own kernels are not under test: one far off is a finding about torch (the harness
        # marks such a baseline invalid), printed here, not a failure of the server.
        for name, b in replies[0]["baselines"].items():
            if "error" in b:
                continue
            for n, e in b["errors"].items():
                want = replies[0]["reference"][n]["rms"]
                if e["rms"] > 0.02 * want:
                    print(f"NOTE {label} {name} {n}: torch's output is {e['rms']:.3g} rms off a reference of rms {want:.3g}", flush=True)


def sparge_case(server, workdir):
    """Sparge on files: q, k, v fp16 bhsd (b1 h4 hk2 s70 d16, 16x16 blocks: a partial last block)."""
    label = "sparge"
    directory = os.path.join(workdir, label)
    os.makedirs(directory)
    b, h, hk, s, d, block = 1, 4, 2, 70, 16, 16
    rng = np.random.default_rng(7)
    tensors = {}
    for name, heads in (("q", h), ("k", hk), ("v", hk)):
        rng.standard_normal((b, heads, s, d)).astype(np.float16).view(np.int16).tofile(os.path.join(directory, f"{name}.bin"))
        tensors[name] = {"file": f"{name}.bin", "dtype": "fp16", "shape": [b, heads, s, d]}
    params = {"dtype": "fp16", "b": b, "h": h, "hk": hk, "sq": s, "sk": s, "d": d, "dv": d, "causal": False, "layout": "bhsd",
              "block_q": block, "block_k": block}
    source = {"source": "files", "generator": "selftest numpy default_rng(7) standard_normal", "seed": 7, "tensors": tensors}
    x = {n: ref.read_tensor(directory, f) for n, f in tensors.items()}
    grid = [b, h, -(-s // block), -(-s // block)]
    ones = torch.ones(grid, dtype=torch.uint8)
    sparse = torch.from_numpy((rng.random(grid) < 0.55).astype(np.uint8))
    sparse[0, 1, 2] = 0  # a query block that visits nothing: O = 0
    dense = ref.attention_reference(ref.Attention.of(params), x)["o"]

    def check(name, block_map, options, ours, q_dequant=None, k_dequant=None):
        prepared = server.request({"cmd": "prepare", "case": label, "op": "sparge", "params": params, "dir": directory,
                                   "inputs": source, "timing": PLAN})
        if name == "dense":
            check_prepare(label, prepared, directory, ["q", "k", "v"], ["o"])
        aux = {"block_map": ref.write_tensor(directory, "aux.block_map", block_map)}
        for n, t in (("q_dequant", q_dequant), ("k_dequant", k_dequant)):
            if t is not None:
                aux[n] = ref.write_tensor(directory, f"aux.{n}", t.float())
        reply = server.request({"cmd": "check", "case": label, "outputs": {"o": write_ours(directory, {"o": ours}, "fp16")["o"]},
                                "aux": aux, "options": options})
        report(f"{label} {name} check ok", reply.get("ok") is True, reply.get("error", ""))
        return prepared, reply

    def settings(options):
        return ref.SpargeCheck.of(params, options, h, d)

    def at_rounding(name, reply, want):
        bound = ROUNDING["fp16"] * float(want.abs().max()) + 1e-7
        report(f"{label} {name}: error at rounding size", reply.get("ok") and reply["errors"]["o"]["maxAbs"] <= bound,
               f"{reply.get('errors')} bound {bound:.3g}")

    # All blocks visited, no PV skip: the dense reference.
    prepared, reply = check("dense", ones, {"pv_mode": "none"}, dense)
    at_rounding("all-ones map, pv none", reply, dense)
    report(f"{label} all-ones map, pv none: reference = dense reference", reply.get("ok") and all(
        close_rel(reply["reference"]["o"][k], prepared["reference"]["o"][k], 1e-5) for k in ("maxAbs", "rms")))

    # A sparse map: the masked reference, against the fp64 port; pv block with threshold 1e9 equals pv none.
    for causal in (False, True):
        tag = " causal" if causal else ""
        none = {"pv_mode": "none", "causal": causal}
        masked, skipped = naive_sparge(x["q"], x["k"], x["v"], sparse, settings(none))
        server_masked = ref.sparge_reference(x["q"], x["k"], x["v"], sparse.to(ref.DEVICE), settings(none))[0].cpu()
        report(f"{label}{tag} masked reference = fp64 port",
               float((server_masked.double() - masked).abs().max()) <= 2e-5 * float(masked.abs().max()))
        with small_chunks():
            chunked = ref.sparge_reference(x["q"], x["k"], x["v"], sparse.to(ref.DEVICE), settings(none))[0].cpu()
        report(f"{label}{tag} masked reference in many chunks = in one", same_tensors({"o": chunked}, {"o": server_masked}))
        report(f"{label}{tag} query block without keys gives O = 0", float(server_masked[0, 1, 2 * block:3 * block].abs().max()) == 0.0)
        _, reply_none = check(f"sparse{tag} pv none", sparse, none, masked)
        at_rounding(f"sparse map{tag}, pv none", reply_none, masked)
        # Per head: 1e9, Number.MAX_VALUE and null (JSON's stand-ins for +inf) never skip either.
        _, reply_block = check(f"sparse{tag} pv block 1e9", sparse,
                               {**none, "pv_mode": "block", "pv_threshold": [1e9, sys.float_info.max, None, 1e9]}, masked)
        # Two code paths (masked rows; blockwise online softmax): equal up to fp32 rounding.
        size = float(masked.abs().max())
        report(f"{label}{tag} pv block with threshold 1e9 = pv none", reply_none.get("ok") and reply_block.get("ok") and all(
            abs(reply_none[k]["o"][s] - reply_block[k]["o"][s]) <= 2e-6 * size for k in ("errors", "reference") for s in ("maxAbs", "rms")),
            f"{reply_none.get('errors')} vs {reply_block.get('errors')}")
        block_1e9 = ref.sparge_reference(x["q"], x["k"], x["v"], sparse.to(ref.DEVICE),
                                         settings({**none, "pv_mode": "block", "pv_threshold": 1e9}))[0]
        report(f"{label}{tag} pv block 1e9 reference = pv none reference (in process)",
               float((block_1e9.cpu() - server_masked).abs().max()) <= 2e-6 * size)

    # PV skip that skips: warp votes with per-head thresholds (null = never); block votes with the
    # skipped mass in the denominator on dequantized Q/K (a coarse grid; key block 0 made dominant,
    # and visited by every query block in `led`, so that whole query blocks vote to skip).
    q_dequant = torch.round(x["q"].float() * 4) / 4
    k_dequant = torch.round(x["k"].float() * 4) / 4
    k_dequant[:, :, :block] *= 3
    led = sparse.clone()
    led[..., 0] = 1
    skipping = (
        ("warp", {"pv_mode": "warp", "pv_threshold": [0.5, 1, 2, None], "warp_rows": 4, "always_computed_tail": 1, "causal": True},
         None, None),
        ("block", {"pv_mode": "block", "pv_threshold": 1, "always_computed_tail": 1, "skipped_mass_in_denominator": True, "scale": 0.3},
         q_dequant, k_dequant),
    )
    for name, options, qd, kd in skipping:
        block_map = led if name == "block" else sparse
        c = settings(options)
        want, skipped = naive_sparge(x["q"], x["k"], x["v"], block_map, c, qd, kd)
        masked, _ = naive_sparge(x["q"], x["k"], x["v"], block_map, settings({**options, "pv_mode": "none"}), qd, kd)
        server_side = ref.sparge_reference(x["q"], x["k"], x["v"], block_map.to(ref.DEVICE), c, qd, kd)[0].cpu()
        with small_chunks():
            chunked = ref.sparge_reference(x["q"], x["k"], x["v"], block_map.to(ref.DEVICE), c, qd, kd)[0].cpu()
        report(f"{label} pv {name}: reference in many head groups = in one", same_tensors({"o": chunked}, {"o": server_side}))
        report(f"{label} pv {name}: the port skips something", skipped > 0, f"{skipped} skipped groups")
        report(f"{label} pv {name}: reference = fp64 port of spargePvSkipAttentionReference",
               float((server_side.double() - want).abs().max()) <= 2e-5 * float(want.abs().max()),
               f"max diff {float((server_side.double() - want).abs().max()):.3g}")
        _, reply = check(f"pv {name}", block_map, options, want, qd, kd)
        at_rounding(f"pv {name}", reply, want)
        _, reply_masked = check(f"pv {name} (masked as ours)", block_map, options, masked, qd, kd)
        report(f"{label} pv {name}: the masked output does not pass for the skipping one",
               reply.get("ok") and reply_masked.get("ok") and reply_masked["errors"]["o"]["rms"] > 2 * reply["errors"]["o"]["rms"],
               f"{reply_masked.get('errors')} vs {reply.get('errors')}")


# ---------------------------------------------------------------------------------------------
# DSA indexer ops: the drawn inputs' structure, the references against fp64 evaluations written here,
# the −∞ masks, the top-k values check, and wrong outputs that must stand out

def e4m3_numpy(raw):
    """fp64 values of e4m3fn bytes decoded from their bits here (not with the server's table)."""
    raw = np.asarray(raw).astype(np.int64)
    exponent, mantissa = (raw >> 3) & 15, raw & 7
    value = np.where(exponent == 0, mantissa * 2.0 ** -9, (8 + mantissa) * np.ldexp(1.0, exponent - 10))
    value = np.where((exponent == 15) & (mantissa == 7), np.nan, value)
    return np.where(raw & 0x80, -value, value)


def naive_dsa_decode(x, L):
    """fp64 decode logits [b·next_n, L], token by token through the block table (pages of 64 x 128 B, then 64 fp32 scales)."""
    cache, table = x["cache"].cpu().numpy(), x["block_table"].cpu().numpy()
    b, next_n, h, d = x["q"].shape
    q = e4m3_numpy(x["q"].cpu().numpy())
    w = x["weights"].cpu().double().numpy().reshape(b, next_n, h)
    out = np.full((b * next_n, L), -np.inf)
    for s in range(b):
        context = int(x["context_lens"][s])
        rows = [cache[table[s, p // 64]] for p in range(context)]
        keys = e4m3_numpy(np.stack([row[(p % 64) * d:(p % 64 + 1) * d] for p, row in enumerate(rows)]))
        scales = np.array([row[8192 + 4 * (p % 64):8196 + 4 * (p % 64)].view(np.float32)[0] for p, row in enumerate(rows)], dtype=np.float64)
        for r in range(next_n):
            logit = scales * (w[s, r][:, None] * np.maximum(q[s, r] @ keys.T, 0)).sum(0)
            limit = context - next_n + r + 1
            out[s * next_n + r, :limit] = logit[:limit]
    return out


def naive_dsa_prefill(x):
    q, keys = e4m3_numpy(x["q"].cpu().numpy()), e4m3_numpy(x["k"].cpu().numpy())
    w, scales = x["weights"].cpu().double().numpy(), x["k_scales"].cpu().double().numpy()
    s, L = q.shape[0], keys.shape[0]
    out = np.full((s, L), -np.inf)
    for t in range(s):
        start, end = int(x["window_start"][t]), int(x["window_end"][t])
        logit = scales * (w[t][:, None] * np.maximum(q[t] @ keys.T, 0)).sum(0)
        out[t, start:end] = logit[start:end]
    return out


def naive_topk_values(logits, k):
    """Per row, the k largest finite-or-not values (NaN excluded), descending, −∞ padded."""
    out = np.full((logits.shape[0], k), -np.inf)
    for r, row in enumerate(logits):
        kept = np.sort(row[~np.isnan(row)])[::-1][:k]
        out[r, :len(kept)] = kept
    return out


def close_to_naive(label, got, naive, rel=2e-5):
    got = got.double().cpu().numpy()
    same_mask = bool(np.array_equal(np.isneginf(got), np.isneginf(naive)))
    finite = np.isfinite(naive)
    scale = float(np.abs(naive[finite]).max()) if finite.any() else 1.0
    diff = float(np.abs(got[finite] - naive[finite]).max()) if finite.any() else 0.0
    report(f"{label}: reference = plain fp64 evaluation", same_mask and diff <= rel * scale,
           f"max diff {diff:.3g} (max {scale:.3g}), −∞ where the evaluation has −∞: {same_mask}")


def amax_codes_ok(values):
    """Every row's largest |value| is the e4m3 maximum ±448 (scale = amax/448 maps it there)."""
    decoded = np.abs(e4m3_numpy(values.reshape(-1, values.shape[-1])))
    return bool(np.all(decoded.max(axis=1) == 448.0))


def dsa_prepare(server, directory, label, op, params, seed):
    return server.request({"cmd": "prepare", "case": label, "op": op, "params": params, "dir": directory,
                           "inputs": {"source": "normal", "seed": seed}, "timing": PLAN})


def dsa_check(server, directory, label, outputs, prefix):
    files = {n: ref.write_tensor(directory, f"{prefix}.{n}", t) for n, t in outputs.items()}
    reply = server.request({"cmd": "check", "case": label, "outputs": files})
    report(f"{label} {prefix} check ok", reply.get("ok") is True, reply.get("error", ""))
    return reply.get("errors", {})


def dsa_checks(server, directory, label, op, params, seed, right, wrongs):
    """`right` (the reference) checks at error 0; each of `wrongs` ({what: (outputs, output name)}) stands out."""
    dsa_prepare(server, directory, label, op, params, seed)
    errors = dsa_check(server, directory, label, right, "ours")
    report(f"{label} reference as ours: error 0", all(e["maxAbs"] == 0 and e["rms"] == 0 for e in errors.values()), json.dumps(errors))
    for what, (outputs, name, at_least) in wrongs.items():
        dsa_prepare(server, directory, label, op, params, seed)
        errors = dsa_check(server, directory, label, outputs, what.replace(" ", "_"))
        report(f"{label} {what} stands out", errors.get(name, {}).get("maxAbs", 0) >= at_least, json.dumps(errors))


def dsa_baseline_errors(label, reply, exact):
    """Torch's DSA forms are compositions written in the server: each that ran stays within 2^-5 (rms) of the
    reference (bf16 and fp8 roundings err ~2^-8); torch.topk's selection is exact (its values are the reference's)."""
    for name, b in reply["baselines"].items():
        for n, e in b.get("errors", {}).items():
            want = reply["reference"][n]["rms"]
            ok = e["maxAbs"] == 0 if exact else e["rms"] <= 2 ** -5 * want
            report(f"{label} {name} {n}: {'exact' if exact else 'within 2^-5 of the reference (rms)'}", ok,
                   f"rms {e['rms']:.3g} of a reference of rms {want:.3g}")


def dsa_decode_structure(label, x, params):
    b, L = params["b"], params["L"]
    max_pages = -(-L // 64)
    table = x["block_table"].cpu().numpy().reshape(-1)
    pages = x["cache"].shape[0]
    report(f"{label} block table: distinct pages in range, one spare page", pages == b * max_pages + 1
           and len(set(table.tolist())) == table.size and table.min() >= 0 and table.max() < pages)
    spare = sorted(set(range(pages)) - set(table.tolist()))
    report(f"{label} the unreferenced page is all 0xff", len(spare) == 1 and bool((x["cache"][spare[0]] == 0xFF).all()))
    cache = x["cache"].cpu().numpy()[table]
    report(f"{label} every key's largest element is ±448, scales positive", amax_codes_ok(cache[:, :8192].reshape(-1, 128))
           and bool((cache[:, 8192:].copy().view(np.float32) > 0).all()))
    report(f"{label} every q head row's largest element is ±448", amax_codes_ok(x["q"].cpu().numpy().reshape(-1, 128)))
    report(f"{label} context = L for every sequence", bool((x["context_lens"] == L).all()))


def dsa_decode_cases(server, workdir):
    op, seed = "dsa_indexer_decode", 11
    base = {"b": 3, "L": 200, "h": 4, "next_n": 1, "k": 16, "page": 64, "hbm_read_bytes": 1 << 20}
    inputs_of = {}
    for stage in ("indexer", "fused", "topk"):
        label = f"dsa_decode_{stage}"
        params = {**base, "stage": stage}
        dirs = [os.path.join(workdir, f"{label}.{i}") for i in range(2)]
        replies = []
        for directory in dirs:
            os.makedirs(directory)
            replies.append(dsa_prepare(server, directory, label, op, params, seed))
        outputs = {"indexer": ["logits"], "fused": ["logits", "topk_values"], "topk": ["topk_values"]}[stage]
        if not check_prepare(label, replies[0], dirs[0], [n for n, _, _ in ref.RUNNERS[op].inputs(params)], outputs):
            server.request({"cmd": "check", "case": label, "outputs": {}})
            continue
        dsa_baseline_errors(label, replies[0], exact=stage == "topk")
        files = replies[0]["inputs"]["tensors"]
        report(f"{label} same seed, same input bytes", all(open(os.path.join(dirs[0], f["file"]), "rb").read()
                                                           == open(os.path.join(dirs[1], f["file"]), "rb").read() for f in files.values()))
        x = {n: ref.read_tensor(dirs[0], f) for n, f in files.items()}
        inputs_of[stage] = x
        report(f"{label} generator described with its seed", f"manual_seed({seed})" in replies[0]["inputs"]["generator"])
        names = sorted(replies[0]["baselines"])
        want = (["hbm-read"] if stage == "indexer" else []) + (["torch-topk", "torch-topk-unsorted"] if stage == "topk" else
                                                              ["torch-bf16", "torch-fp8-rowwise", "torch-fp8-tensorwise"])
        report(f"{label} baselines {', '.join(sorted(want))}", names == sorted(want), ", ".join(names))
        hbm = replies[0]["baselines"].get("hbm-read", {})
        if stage == "indexer":
            report(f"{label} hbm-read measured GB/s", hbm.get("gbps", 0) > 0 and hbm.get("errors") == {}, json.dumps(hbm)[:300])
        with torch.no_grad():
            reference = ref.RUNNERS[op].reference(params, x)
        directory = dirs[1]
        if stage == "topk":
            logits = x["logits"]
            close_to_naive(f"{label} logits input", logits, naive_dsa_decode(inputs_of["indexer"], base["L"]))
            values = torch.from_numpy(naive_topk_values(logits.cpu().double().numpy(), base["k"])).float()
            report(f"{label} topk_values = fp64 selection", bool(torch.equal(reference["topk_values"].cpu(), values)))
            worse = values.clone()
            worse[1, -1] = torch.from_numpy(np.sort(logits[1].cpu().numpy())[::-1].copy())[base["k"]]  # the (k+1)-th instead of the k-th
            dsa_checks(server, directory, label, op, params, seed, {"topk_values": values},
                       {"one wrong selection": ({"topk_values": worse}, "topk_values", float(values[1, -1] - worse[1, -1]))})
            continue
        dsa_decode_structure(label, x, params)
        naive = naive_dsa_decode(x, base["L"])
        close_to_naive(label, reference["logits"], naive)
        with small_chunks():
            chunked = ref.RUNNERS[op].reference(params, x)
        # Chunks change the GEMM shapes cuBLAS blocks, so the fp32 sums may round differently: equal masks, 1e-6 apart.
        report(f"{label} reference in many chunks = in one", same_masked_tensors(chunked, reference))
        right = {n: t.cpu() for n, t in reference.items()}
        dropped = {n: t.clone() for n, t in right.items()}
        dropped["logits"][1, 64:128] = 0  # a key tile the kernel never wrote
        size = float(right["logits"].abs().max())
        wrongs = {"dropped key tile": (dropped, "logits", 1e-3 * size)}
        if stage == "fused":
            values = torch.from_numpy(naive_topk_values(naive, base["k"])).float()
            report(f"{label} topk_values = fp64 selection of the fp64 logits",
                   float((reference["topk_values"].cpu() - values).abs().max()) <= 2e-5 * size)
        dsa_checks(server, directory, label, op, params, seed, right, wrongs)


def dsa_prefill_case(server, workdir):
    op, seed, label = "dsa_indexer_prefill", 12, "dsa_prefill"
    params = {"s": 40, "L": 100, "h": 4, "windows": "causal"}
    directory = os.path.join(workdir, label)
    os.makedirs(directory)
    reply = dsa_prepare(server, directory, label, op, params, seed)
    if not check_prepare(label, reply, directory, [n for n, _, _ in ref.RUNNERS[op].inputs(params)], ["logits"]):
        server.request({"cmd": "check", "case": label, "outputs": {}})
        return
    dsa_baseline_errors(label, reply, exact=False)
    x = {n: ref.read_tensor(directory, f) for n, f in reply["inputs"]["tensors"].items()}
    report(f"{label} baselines", sorted(reply["baselines"]) == ["torch-bf16", "torch-fp8-rowwise", "torch-fp8-tensorwise"])
    bf16 = reply["baselines"].get("torch-bf16", {})
    window_keys = 40 * 60 + 40 * 41 // 2
    report(f"{label} torch-bf16 TFLOP/s and GB/s of the window count", "error" in bf16 or close_rel(
        bf16.get("tflops", 0), 2 * window_keys * 4 * 128 / bf16["ms"] / 1e9, 1e-9) and bf16.get("gbps", 0) > 0, json.dumps(bf16)[:300])
    report(f"{label} causal windows [0, L - s + t + 1)", bool((x["window_start"] == 0).all())
           and x["window_end"].tolist() == list(range(61, 101)))
    report(f"{label} keys and q rows reach ±448", amax_codes_ok(x["k"].cpu().numpy()) and amax_codes_ok(x["q"].cpu().numpy()))
    with torch.no_grad():
        reference = ref.RUNNERS[op].reference(params, x)["logits"]
        with small_chunks():
            chunked = ref.RUNNERS[op].reference(params, x)["logits"]
    report(f"{label} reference in many chunks = in one", bool(torch.equal(chunked, reference)))
    close_to_naive(label, reference, naive_dsa_prefill(x))
    right = reference.cpu()
    unmasked, masked, dropped = right.clone(), right.clone(), right.clone()
    unmasked[0, 99] = 0.0  # a position past query 0's window (it ends at 61) written finite
    masked[5, 3] = -math.inf  # a position inside the window masked
    dropped[7, :64] = 0.0
    size = float(right[torch.isfinite(right)].abs().max())
    dsa_checks(server, directory, label, op, params, seed, {"logits": right}, {
        "finite where masked": ({"logits": unmasked}, "logits", math.inf),
        "-inf inside the window": ({"logits": masked}, "logits", math.inf),
        "dropped key tile": ({"logits": dropped}, "logits", 1e-3 * size)})


# ---------------------------------------------------------------------------------------------
# DSA sparse MLA prefill: the drawn inputs' structure, the reference against an fp64 evaluation written here,
# torch-gather's figure and error, wrong outputs (a dropped token, swapped heads) standing out

def naive_mla_prefill(x, sm_scale):
    """fp64 out [s_q, h_q, 512] and lse [s_q, h_q], query by query over its index row."""
    q, kv = x["q"].cpu().double().numpy(), x["kv"].cpu().double().numpy()
    indices = x["indices"].cpu().numpy()
    s_q, h_q, _ = q.shape
    out, lse = np.zeros((s_q, h_q, 512)), np.zeros((s_q, h_q))
    for t in range(s_q):
        keys = kv[indices[t]]
        scores = sm_scale * (q[t] @ keys.T)
        peak = scores.max(axis=1, keepdims=True)
        weights = np.exp(scores - peak)
        total = weights.sum(axis=1, keepdims=True)
        lse[t] = (peak + np.log(total))[:, 0]
        out[t] = (weights / total) @ keys[:, :512]
    return {"out": out, "lse": lse}


def mla_structure(label, x, params):
    indices = x["indices"].cpu().numpy()
    distinct = all(len(set(row.tolist())) == params["topk"] for row in indices)
    report(f"{label} index rows: int32, {params['topk']} distinct tokens of [0, s_kv) each, not sorted",
           x["indices"].dtype == torch.int32 and distinct and indices.min() >= 0 and indices.max() < params["s_kv"]
           and not all((np.diff(row) > 0).all() for row in indices))
    for name, (lo, hi) in (("kv", ref.MLA_KV_LOG2_RANGE), ("q", ref.MLA_Q_LOG2_RANGE)):
        rows = x[name].float().reshape(-1, 576)
        rms = rows.square().mean(1).sqrt().log2()
        report(f"{label} {name}: bf16 rows of rms within 2^[{lo - 0.5}, {hi + 0.5}], not all the same size", x[name].dtype == torch.bfloat16
               and bool((rms > lo - 0.5).all() and (rms < hi + 0.5).all()) and float(rms.max() - rms.min()) > 0.3, f"log2 rms {rms.min():.2f}..{rms.max():.2f}")


def dsa_mla_prefill_case(server, workdir):
    op, seed, label = "dsa_sparse_mla_prefill", 13, "dsa_mla_prefill"
    params = {"s_q": 6, "s_kv": 300, "h_q": 4, "topk": 40, "sm_scale": 0.135234}
    dirs = [os.path.join(workdir, f"{label}.{i}") for i in range(2)]
    replies = []
    for directory in dirs:
        os.makedirs(directory)
        replies.append(dsa_prepare(server, directory, label, op, params, seed))
    if not check_prepare(label, replies[0], dirs[0], ["q", "kv", "indices"], ["out", "lse"]):
        server.request({"cmd": "check", "case": label, "outputs": {}})
        return
    dsa_baseline_errors(label, replies[0], exact=False)
    files = replies[0]["inputs"]["tensors"]
    report(f"{label} same seed, same input bytes", all(open(os.path.join(dirs[0], f["file"]), "rb").read()
                                                       == open(os.path.join(dirs[1], f["file"]), "rb").read() for f in files.values()))
    report(f"{label} generator described with its seed", f"manual_seed({seed})" in replies[0]["inputs"]["generator"])
    report(f"{label} baselines", sorted(replies[0]["baselines"]) == ["torch-gather"])
    gather = replies[0]["baselines"]["torch-gather"]
    report(f"{label} torch-gather TFLOP/s of 2·s_q·topk·h_q·(576 + 512)", "error" not in gather and close_rel(
        gather["tflops"], 2 * 6 * 40 * 4 * 1088 / gather["ms"] / 1e9, 1e-9), json.dumps(gather)[:300])
    x = {n: ref.read_tensor(dirs[0], f) for n, f in files.items()}
    mla_structure(label, x, params)
    with torch.no_grad():
        reference = ref.RUNNERS[op].reference(params, x)
        with small_chunks():
            chunked = ref.RUNNERS[op].reference(params, x)
    report(f"{label} reference in many chunks = in one", same_tensors(chunked, reference))
    naive = naive_mla_prefill(x, params["sm_scale"])
    for n in ("out", "lse"):
        close_to_naive(f"{label} {n}", reference[n], naive[n])
    right = {n: t.cpu() for n, t in reference.items()}
    dropped = {"out": torch.from_numpy(naive_mla_prefill({**x, "indices": x["indices"][:, 1:]}, params["sm_scale"])["out"]).float(),
               "lse": right["lse"]}
    swapped = {"out": right["out"][:, [1, 0, 2, 3]].contiguous(), "lse": right["lse"][:, [1, 0, 2, 3]].contiguous()}
    size = float(right["out"].abs().max())
    dsa_checks(server, dirs[1], label, op, params, seed, right, {
        "dropped token": (dropped, "out", 1e-3 * size),
        "swapped heads": (swapped, "lse", 1e-3)})

def dsa_step_case(server, workdir):
    """dsa_decode_step: inputs as documented, the reference = its parts (logits, top-k slots, attention), torch's two
    baselines run, and the check judges out/lse over the aux slots it is sent (other slots: the reference's out stands out)."""
    op, seed, label = "dsa_decode_step", 14, "dsa_step"
    # graph 0: at this size the CUDA graph of torch-gather-graph gathered out of bounds on the H200 (torch 2.11; a device
    # assert that ends the process's CUDA context), at the suite's sizes its errors equal the eager form's (REFERENCE_OPS.md).
    params = {"b": 2, "s_q": 1, "L": 512, "h": 64, "h_q": 16, "topk": 64, "sm_scale": 0.135234, "graph": 0}
    names = ["index_q", "index_weights", "index_cache", "block_table", "context_lens", "q", "mla_cache"]
    dirs = [os.path.join(workdir, f"{label}.{i}") for i in range(2)]
    replies = []
    for directory in dirs:
        os.makedirs(directory)
        replies.append(dsa_prepare(server, directory, label, op, params, seed))
        server.request({"cmd": "check", "case": label, "outputs": {}})  # frees the prepared case
    if not check_prepare(label, replies[0], dirs[0], names, ["logits", "out", "lse"], figure=False):
        return
    files = replies[0]["inputs"]["tensors"]
    report(f"{label} same seed, same input bytes", all(open(os.path.join(dirs[0], f["file"]), "rb").read()
                                                       == open(os.path.join(dirs[1], f["file"]), "rb").read() for f in files.values()))
    ran = {n: "error" not in b for n, b in replies[0]["baselines"].items()}
    report(f"{label} baseline torch-gather ran (graph 0: no torch-gather-graph)", ran == {"torch-gather": True},
           json.dumps(replies[0]["baselines"])[:400])
    x = {n: ref.read_tensor(dirs[0], f) for n, f in files.items()}
    d = ref.DsaStep.of(params)
    with torch.no_grad():
        reference = ref.RUNNERS[op].reference(params, x)
        close_to_naive(f"{label} logits", reference["logits"], naive_dsa_decode(d.index_inputs(x), params["L"]))
        slots = d.slots(x, torch.topk(reference["logits"], d.topk, dim=-1).indices)
        kv = ref.mla_dequantize_rows(x["mla_cache"].view(-1, 656))
        naive = naive_mla_prefill({"q": x["q"].view(d.rows, d.h_q, 576), "kv": kv, "indices": slots}, d.sm_scale)
    report(f"{label} every slot is a page of its own sequence", all(
        set((slots[r] // 64).tolist()) <= set(x["block_table"][r // d.s_q].tolist()) for r in range(d.rows)))
    close_to_naive(f"{label} out", reference["out"].view(d.rows, d.h_q, 512), naive["out"])
    right = {n: t.cpu() for n, t in reference.items()}
    for what, aux, at_least in (("reference slots", slots, None), ("one slot moved", slots.clone().index_fill_(1, torch.tensor([0],
                                device=slots.device), int(slots[0, 0]) ^ 1), 1e-3 * float(right["out"].abs().max()))):
        dsa_prepare(server, dirs[1], label, op, params, seed)
        files_out = {n: ref.write_tensor(dirs[1], f"ours.{n}", t) for n, t in right.items()}
        reply = server.request({"cmd": "check", "case": label, "outputs": files_out,
                                "aux": {"slots": ref.write_tensor(dirs[1], "slots", aux.int())}})
        errors = reply.get("errors", {})
        if at_least is None:
            report(f"{label} reference as ours over the {what}: error 0", reply.get("ok") is True and all(
                e["maxAbs"] == 0 for e in errors.values()), json.dumps(reply)[:400])
        else:
            report(f"{label} {what}: out stands out", errors.get("out", {}).get("maxAbs", 0) >= at_least, json.dumps(reply)[:400])


def dsa_error_stats_checks():
    """The −∞ mask rule of error_stats / reference_stats, in process."""
    want = torch.tensor([1.0, -math.inf, -2.0])
    same = ref.error_stats(torch.tensor([1.0, -math.inf, -2.0]), want)
    off = ref.error_stats(torch.tensor([1.5, -math.inf, -2.0]), want)
    report("error_stats: −∞ matching −∞ counts as 0", same == {"maxAbs": 0.0, "rms": 0.0}, json.dumps(same))
    report("error_stats: the other elements as usual", off["maxAbs"] == 0.5 and close_rel(off["rms"], math.sqrt(0.25 / 3), 1e-12))
    report("error_stats: finite where the reference is −∞ is Infinity",
           ref.error_stats(torch.tensor([1.0, 0.0, -2.0]), want)["maxAbs"] == math.inf)
    report("reference_stats: −∞ counts as 0", ref.reference_stats(want) == {"maxAbs": 2.0, "rms": math.sqrt(5 / 3)})
    try:
        ref.error_stats(torch.tensor([1.0]), torch.tensor([math.inf]))
        report("error_stats: +∞ in the reference is refused", False)
    except ValueError:
        report("error_stats: +∞ in the reference is refused", True)


CASES = [
    ("permute_fp16", "permute", {"dtype": "fp16", "shape": "3x5x7x4", "perm": "0,2,1,3"}, True),
    ("permute_fp32", "permute", {"dtype": "fp32", "shape": "6x10", "perm": "1,0"}, True),
    ("permute_bf16", "permute", {"dtype": "bf16", "shape": [2, 3, 4], "perm": [2, 1, 0]}, True),
    ("gemm_tt_fp16", "gemm", {"dtype": "fp16", "m": 33, "n": 17, "k": 40}, True),
    ("gemm_nn_bf16", "gemm", {"dtype": "bf16", "m": 16, "n": 24, "k": 8, "layout": "nn"}, True),
    ("gemm_tn_pitched_fp16", "gemm", {"dtype": "fp16", "m": 33, "n": 17, "k": 40, "layout": "tn", "lda": 48, "ldb": 56}, True),
    ("gemm_nt_pitched_bf16", "gemm", {"dtype": "bf16", "m": 33, "n": 17, "k": 40, "layout": "nt", "lda": 40, "ldb": 24}, True),
    ("fwd_bhsd_fp16", "attention_fwd", {"dtype": "fp16", "b": 2, "h": 4, "sq": 40, "sk": 40, "d": 16, "layout": "bhsd"}, True),
    ("fwd_bshd_causal_scale_bf16", "attention_fwd",
     {"dtype": "bf16", "b": 2, "h": 4, "sq": 40, "sk": 40, "d": 16, "causal": True, "layout": "bshd", "scale": 0.3}, True),
    ("fwd_gqa_dv_fp16", "attention_fwd",
     {"dtype": "fp16", "b": 2, "h": 4, "hk": 2, "sq": 24, "sk": 40, "d": 16, "dv": 8, "layout": "bhsd"}, True),
    ("fwd_varlen_gqa_fp16", "attention_fwd",
     {"dtype": "fp16", "b": 3, "h": 4, "hk": 2, "d": 16, "seqlens_q": [5, 0, 17], "seqlens_k": [9, 3, 17]}, True),
    ("fwd_varlen_causal_bf16", "attention_fwd",
     {"dtype": "bf16", "b": 2, "h": 2, "d": 8, "causal": True, "seqlens_q": [7, 16], "seqlens_k": [7, 16]}, True),
    # Bottom-right causal with sq < sk: torch's is_causal is top-left, so its baselines differ from the reference.
    ("fwd_bottom_right_causal_fp16", "attention_fwd", {"dtype": "fp16", "b": 1, "h": 2, "sq": 12, "sk": 40, "d": 16, "causal": True},
     False),
    ("bwd_gqa_causal_fp16", "attention_bwd", {"dtype": "fp16", "b": 1, "h": 4, "hk": 2, "sq": 32, "sk": 32, "d": 16, "causal": True}, True),
    ("bwd_dv_fp16", "attention_bwd", {"dtype": "fp16", "b": 2, "h": 2, "s": 24, "d": 16, "dv": 8, "layout": "bhsd"}, True),
    ("bwd_varlen_bf16", "attention_bwd", {"dtype": "bf16", "b": 2, "h": 2, "d": 8, "seqlens": [6, 19]}, True),
]


def protocol_checks(server, workdir):
    hello = server.request({"cmd": "hello"})
    p = hello.get("provenance", {})
    report("hello provenance", hello.get("ok") is True
           and all(isinstance(p.get(k), str) for k in ("device", "torch", "cuda", "cudnn", "driver"))
           and all(isinstance(p.get(k), (int, float)) for k in ("smClockMHz", "smClockMaxMHz", "powerLimitW")), json.dumps(hello))
    bogus = server.request({"cmd": "bogus"})
    report("unknown cmd answers ok:false", bogus.get("ok") is False and "bogus" in bogus.get("error", ""), json.dumps(bogus))
    missing = server.request({"cmd": "check", "case": "never-prepared", "outputs": {}})
    report("check of an unknown case answers ok:false", missing.get("ok") is False, json.dumps(missing))
    directory = os.path.join(workdir, "nan")
    os.makedirs(directory)
    params = {"dtype": "fp16", "shape": "4x4", "perm": "1,0"}
    prepared = server.request({"cmd": "prepare", "case": "nan", "op": "permute", "params": params, "dir": directory,
                               "inputs": {"source": "normal", "seed": 3}, "timing": PLAN})
    nan = torch.full((4, 4), math.nan, dtype=torch.float16)
    reply = server.request({"cmd": "check", "case": "nan", "outputs": {"y": ref.write_tensor(directory, "ours.y", nan)}})
    report("NaN in ours gives Infinity (1e999 on the wire)", prepared.get("ok") and reply.get("ok")
           and reply["errors"]["y"]["maxAbs"] == math.inf and reply["errors"]["y"]["rms"] == math.inf, json.dumps(reply))
    alive = server.request({"cmd": "hello"})
    report("server alive after failed requests", alive.get("ok") is True)


def selected(label):
    """Whether `--only PREFIX[,PREFIX…]` (none: every case) selects the case named `label`."""
    only = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--only=")]
    parts = [p for arg in only for p in arg.split(",") if p]
    return not parts or any(label.startswith(p) for p in parts)


def main():
    print(f"torch {torch.__version__}, device {ref.DEVICE}", flush=True)
    workdir = tempfile.mkdtemp(prefix="tilekit-reference-selftest-")
    server = Server(workdir)
    try:
        protocol_checks(server, workdir)
        for label, op, params, torch_agrees in CASES:
            if not selected(label):
                continue
            try:
                run_case(server, workdir, label, op, params, torch_agrees=torch_agrees)
            except Exception as error:  # one broken case must not hide the others
                report(f"{label} ran", False, ref.describe(error))
        for label, run in (("sparge", lambda: sparge_case(server, workdir)), ("dsa_error_stats", dsa_error_stats_checks),
                           ("dsa_decode", lambda: dsa_decode_cases(server, workdir)), ("dsa_prefill", lambda: dsa_prefill_case(server, workdir)),
                           ("dsa_mla_prefill", lambda: dsa_mla_prefill_case(server, workdir)),
                           ("dsa_step", lambda: dsa_step_case(server, workdir))):
            if not selected(label):
                continue
            try:
                run()
            except Exception as error:
                report(f"{label} ran", False, ref.describe(error))
    finally:
        code = server.close()
    report("server exits 0 at EOF", code == 0, f"exit {code}")
    if FAILURES:
        print(f"server log: {server.log_path}")
    print(f"{'FAIL' if FAILURES else 'PASS'}: {len(FAILURES)} failed check(s)" + (f": {', '.join(FAILURES)}" if FAILURES else ""))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
