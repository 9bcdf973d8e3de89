// example_ffpa -bwd: FFPA's backward dQ, dK, dV (dot_do_o, the split-D dq_dk_dv on the -path
// pipeline — sm90: warp-specialized wgmma + TMA in clusters, dQ by TMA bulk reductions; sm80: mma.sync
// built for sm_90a, dQ by atomics — into the unified workspace, and convert_dq). Prints the three
// instances, compiles them, computes the fp64 CPU reference (-v=1, forward O and LSE included), and
// on a GPU runs the FFPA forward for O and LSE (untimed), times the backward and validates it.
import {
  compareFmhaBwd,
  fmhaBwdOperandElements,
  fmhaBwdProblemFlops,
  fmhaBwdReference,
  formatFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  type FmhaBwdHostInputs,
  type FmhaBwdReference,
} from '@tilekit/fmha';
import { FMHA_BWD_COMPILE_FLAGS } from '@tilekit/fmha-launch';
import { fillTensor, formatTable, HostTensor, summarizeTimes, tflops } from '@tilekit/host';
import { FfpaBwdRunner, FfpaRunner, type FfpaBwdKernelSet, type FfpaPlan } from '@tilekit/kernel-ffpa';
import { compileInstance, timeLaunches, type Device, type DeviceBuffer, type NvccCompiler } from '@tilekit/runtime';

/** The backward of the flags: the checked problem, its three kernels, and the forward plan that gives it O and LSE. */
export interface FfpaBwdPlan {
  readonly problem: CheckedFmhaBwdProblem;
  readonly kernels: FfpaBwdKernelSet;
  /** The FFPA forward of the same problem with LSE (run untimed on a GPU for O and LSE). */
  readonly forward: FfpaPlan;
}

/** Above this many forward multiply-adds the fp64 backward reference is skipped (it says so): it cannot sample rows. */
export const BWD_REFERENCE_MAX_MACS = 2 ** 30;

/** Logs the problem, the forward plan it takes O and LSE from, and the three backward instances. */
export function logFfpaBwdPlan(program: string, plan: FfpaBwdPlan, log: (line: string) => void): void {
  const p = plan.problem;
  const { dotDoO, dqDkDv, convertDq } = plan.kernels;
  log(`${program} -bwd: ${formatFmhaBwdProblem(p)}, scale ${p.scale}`);
  log(`forward for O and LSE: ${plan.forward.description} (${[...new Set(plan.forward.slices.map((s) => s.instance.name))].join(' + ')})`);
  const launch = dqDkDv.launch(p.batch, p.nheadK, p.seqlenK); // group mode: seqlenK is the longest key slot
  log(`dot_do_o: ${dotDoO.name} (D = rowsum(dO ∘ O), ${dotDoO.threads} threads)`);
  const k = plan.kernels;
  const tile = k.path === 'sm90' ? [k.dqDkDv.pipeline.tileN, k.dqDkDv.pipeline.tileM] : [k.dqDkDv.policy.tileN, k.dqDkDv.policy.tileM];
  const split =
    k.path === 'sm90'
      ? `clusters of ${k.dqDkDv.pipeline.clusterCtas} CTAs, ${k.dqDkDv.pipeline.slices} column slice(s)); ` +
        `dQ by TMA bulk reductions${k.dqDkDv.keyOrdered ? ' in key order (deterministic)' : ''}`
      : `${k.dqDkDv.pipeline.slices} column slice(s)); dQ by atomics`;
  log(
    `dq_dk_dv: ${dqDkDv.name} (key ${dqDkDv.key.hash}), tile ${tile.join('x')}, ${dqDkDv.threads} threads; ` +
      `grid [${launch.grid.join(', ')}] (${split}, ${dqDkDv.sharedBytes} B dynamic smem; ${k.path} path`,
  );
  log(`convert_dq: ${convertDq.name} (fp32 dq_acc → ${p.dtype} dQ, ${convertDq.threads} threads)`);
}

/** Compiles the three instances with nvcc (the runner's flags) and logs their registers, shared memory and spills. */
export async function compileFfpaBwd(kernels: FfpaBwdKernelSet, compiler: NvccCompiler, log: (line: string) => void): Promise<void> {
  const rows: (string | number | boolean)[][] = [];
  for (const instance of [kernels.dotDoO, kernels.dqDkDv, kernels.convertDq]) {
    const compiled = await compileInstance(instance, compiler, FMHA_BWD_COMPILE_FLAGS);
    const r = compiled.resources;
    const spills = `${r.spillStores}/${r.spillLoads}`;
    rows.push([instance.name, compiled.arch, r.registers, r.sharedBytes, instance.sharedBytes, spills, r.stackFrame, compiled.cached]);
  }
  log(formatTable(['kernel', 'arch', 'registers', 'static smem (B)', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'], rows));
}

/** Q, K, V and dO as fp16/bf16 bits, uniform in [-1, 1), from `seed` … `seed + 3` (Q, K, V as the forward's). */
export function ffpaBwdInputs(p: CheckedFmhaBwdProblem, seed: number): FmhaBwdHostInputs {
  const elems = fmhaBwdOperandElements(p);
  const bits = (n: number, s: number): Uint16Array => {
    const b = fillTensor(HostTensor.empty(p.dtype, [Math.max(1, n)]), 'uf:-1,1', s).bytes();
    return new Uint16Array(b.buffer, b.byteOffset, Math.max(1, n));
  };
  return { q: bits(elems.q, seed), k: bits(elems.k, seed + 1), v: bits(elems.v, seed + 2), dO: bits(elems.dO, seed + 3) };
}

function maxAbs(values: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < values.length; i++) m = Math.max(m, Math.abs(values[i]!));
  return m;
}

/** The fp64 CPU reference (forward O and LSE, then dQ, dK, dV), logged; undefined (logged) above {@link BWD_REFERENCE_MAX_MACS}. */
export function ffpaBwdReferenceOf(
  p: CheckedFmhaBwdProblem,
  data: FmhaBwdHostInputs,
  log: (line: string) => void,
): FmhaBwdReference | undefined {
  const macs = fmhaBwdProblemFlops(p) / 5;
  if (macs > BWD_REFERENCE_MAX_MACS) {
    log(`CPU reference skipped: 2^${Math.log2(macs).toFixed(1)} > 2^30 forward multiply-adds (use a smaller problem to validate)`);
    return undefined;
  }
  const started = performance.now();
  const ref = fmhaBwdReference(p, data, undefined);
  const ms = (performance.now() - started).toFixed(1);
  const r = ref.result;
  const t = ref.tolerance;
  log(
    `CPU reference (fp64; forward O rounded to ${p.dtype}, LSE fp32): ${ms} ms; max |dQ| ${maxAbs(r.dq).toExponential(2)}, ` +
      `|dK| ${maxAbs(r.dk).toExponential(2)}, |dV| ${maxAbs(r.dv).toExponential(2)}; ` +
      `tolerance dQ atol ${t.dq.atol.toExponential(2)}, dK ${t.dk.atol.toExponential(2)}, dV ${t.dv.atol.toExponential(2)}`,
  );
  return ref;
}

/** What a GPU run of the backward needs. */
export interface FfpaBwdDeviceRun {
  readonly device: Device;
  readonly compiler: NvccCompiler;
  readonly data: FmhaBwdHostInputs;
  readonly reference: FmhaBwdReference | undefined;
  readonly warmup: number;
  readonly repeat: number;
  readonly log: (line: string) => void;
}

/**
 * Uploads Q, K, V, dO, runs the FFPA forward once for O and LSE (untimed), times warmup + repeat
 * backward launches back to back (dot_do_o, dq_acc zeroed, dq_dk_dv, convert_dq), and with a
 * reference validates dQ, dK, dV. Returns the exit code (1 when a gradient is wrong).
 */
export async function runFfpaBwdOnDevice(plan: FfpaBwdPlan, r: FfpaBwdDeviceRun): Promise<number> {
  const { device, log } = r;
  const p = plan.problem;
  const elems = fmhaBwdOperandElements(p);
  const fwd = await FfpaRunner.create(plan.forward.problem, { device, compiler: r.compiler, path: plan.forward.path });
  const buffers: DeviceBuffer[] = [];
  const keep = (b: DeviceBuffer): DeviceBuffer => (buffers.push(b), b);
  let runner: FfpaBwdRunner | undefined;
  try {
    runner = await FfpaBwdRunner.create(p, { device, compiler: r.compiler, path: plan.kernels.path });
    const grad = (n: number): DeviceBuffer => keep(device.alloc(Math.max(1, n) * 2).fill(0xff));
    const group =
      p.mode === 'group'
        ? { seqstartQ: keep(device.upload(new Int32Array(p.seqstartQ))), seqstartK: keep(device.upload(new Int32Array(p.seqstartK))) }
        : {};
    const bufs = {
      q: keep(device.upload(r.data.q)),
      k: keep(device.upload(r.data.k)),
      v: keep(device.upload(r.data.v)),
      dO: keep(device.upload(r.data.dO)),
      o: grad(elems.o),
      lse: keep(device.alloc(Math.max(1, elems.lse) * 4).fill(0xff)),
      dQ: grad(elems.dQ),
      dK: grad(elems.dK),
      dV: grad(elems.dV),
      ...group,
    };
    fwd.run({ q: bufs.q, k: bufs.k, v: bufs.v, o: bufs.o, lse: bufs.lse, ...group });
    log(`O and LSE from the FFPA forward on the GPU (untimed); backward workspace ${runner.workspaceSize.total} B`);
    const run = runner.prepare(bufs); // validated once, before any launch
    const t = summarizeTimes(timeLaunches(device, run.launch, { warmup: r.warmup, repeat: r.repeat }));
    const flops = fmhaBwdProblemFlops(p);
    log(
      `${device.name}: ${t.median.toFixed(4)} ms (median of ${t.n} after ${r.warmup} warmup; dot_do_o + dq_acc memset + dq_dk_dv + convert_dq), ` +
        `${tflops(flops, t.median).toFixed(1)} TFLOP/s (${(flops / 1e12).toFixed(3)} TFLOP = 2.5 × forward)`,
    );
    if (r.reference === undefined) return 0;
    const host = (b: DeviceBuffer): Uint16Array => {
      const x = b.copyToHost();
      return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
    };
    const results = compareFmhaBwd(p, r.reference, { dQ: host(bufs.dQ), dK: host(bufs.dK), dV: host(bufs.dV) });
    for (const c of results)
      log(
        `${c.tensor}: ${c.checked} values, max |err| ${c.maxAbsErr.toExponential(2)}, ${c.wrong} outside${c.first ? `; first: ${c.first}` : ''}`,
      );
    const ok = results.every((c) => c.wrong === 0);
    log(`valid: ${ok ? 'yes' : 'no'}`);
    return ok ? 0 : 1;
  } finally {
    device.synchronize();
    for (const b of buffers) b.dispose();
    runner?.dispose();
    fwd.dispose();
  }
}
