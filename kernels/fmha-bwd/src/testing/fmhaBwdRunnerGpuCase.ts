// The case runner of the backward runner GPU specs (fmhaBwd, fmhaBwdRunnerScoreMod): one case
// through FmhaBwdRunner (dot_do_o, dq_dk_dv, convert_dq) on device 0 against the float64 CPU
// reference, with an optional score modifier and, for deterministic dQ, repeated runs that must give
// bitwise the same dQ. Harness code for *.gpu.spec.ts; not exported by the package.
import assert from 'node:assert/strict';
import {
  attentionScoreSetup,
  type AttentionLayout,
  type AttentionScoreSetup,
  checkFmhaBwdProblem,
  formatFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  compareFmhaBwd,
  fmhaBwdReference,
  type FmhaBwdReference,
} from '@tilekit/fmha';
import { Device, type DeviceBuffer } from '@tilekit/runtime';
import { gpuTestCompiler } from '@tilekit/runtime/testing';
import { buildFmhaBwdKernelsOnce } from '@tilekit/fmha-launch';
import { FmhaBwdRunner } from '../fmhaBwdRunner.ts';
import type { FmhaBwdGpuCase } from './fmhaBwdGpuCase.ts';
import { deviceBits16, fmhaBwdGpuBuffers, fmhaBwdGpuInputs, type FmhaBwdGpuBuffers } from '@tilekit/fmha-launch/testing';

/** The cap of the soft-capping cases: small enough that tanh bends typical scores. */
export const FMHA_BWD_GPU_CASE_SOFTCAP = 1.5;

/** One backward case through the runner. */
export interface FmhaBwdRunnerGpuCase extends FmhaBwdGpuCase {
  /** Input and output layout; default 'bhsd'. */
  readonly layout?: AttentionLayout;
  /** Deterministic dQ (persistent splits); default the problem's. */
  readonly deterministic?: boolean;
  /** Deterministic cases: runs whose dQ must be bitwise identical. */
  readonly repeats?: number;
  /** A score modifier: soft-capping at FMHA_BWD_GPU_CASE_SOFTCAP, or ALiBi with the geometric slopes of attentionScoreSetup. */
  readonly score?: 'softcap' | 'alibi';
}

const buildKernel = buildFmhaBwdKernelsOnce({ device: () => Device.open(0), compiler: () => gpuTestCompiler('fmha-bwd-gpu') });

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

function problemOf(c: FmhaBwdRunnerGpuCase): CheckedFmhaBwdProblem {
  const common = {
    dtype: c.dtype,
    batch: c.batch,
    nheadQ: c.h,
    nheadK: c.hk ?? c.h,
    hdimQ: c.d,
    mask: c.mask,
    ...(c.deterministic === undefined ? {} : { deterministic: c.deterministic }),
    inputLayout: c.layout ?? 'bhsd',
    outputLayout: c.layout ?? 'bhsd',
    ...(c.score === undefined ? {} : { scoreModifier: c.score }),
  } as const;
  return checkFmhaBwdProblem(
    Array.isArray(c.sq)
      ? { ...common, seqstartQ: starts(c.sq as readonly number[]), seqstartK: starts(c.sk as readonly number[]) }
      : { ...common, seqlenQ: c.sq as number, seqlenK: c.sk as number },
  );
}

/** Device memory of one case besides the runner's own: its buffers, a NaN-filled workspace, ALiBi's slopes. */
interface CaseMemory {
  readonly bufs: FmhaBwdGpuBuffers;
  readonly workspace?: DeviceBuffer;
  readonly slopes?: DeviceBuffer;
}

/**
 * The workspace starts as NaN (0xff bytes): dq_acc splits the launcher does not zero must all be
 * written by dq_dk_dv before convert_dq reads them, or dQ comes out NaN. (compute-sanitizer's
 * initcheck does not count dq_dk_dv's TMA bulk stores as initialization; this check does.)
 */
function allocate(device: Device, runner: FmhaBwdRunner, bufs: FmhaBwdGpuBuffers, score: AttentionScoreSetup | undefined): CaseMemory {
  const total = runner.workspaceSize.total;
  return {
    bufs,
    ...(total > 0 ? { workspace: device.alloc(total).fill(0xff) } : {}),
    ...(score?.slopes === undefined ? {} : { slopes: device.upload(score.slopes) }),
  };
}

/** Checks dQ, dK, dV against the reference (every element); returns dQ's bits and the errors' summary. */
function checkGradients(p: CheckedFmhaBwdProblem, ref: FmhaBwdReference, bufs: FmhaBwdGpuBuffers): { dQ: Uint16Array; summary: string } {
  const dQ = deviceBits16(bufs.dQ);
  const results = compareFmhaBwd(p, ref, { dQ, dK: deviceBits16(bufs.dK), dV: deviceBits16(bufs.dV) });
  for (const r of results)
    assert.equal(r.wrong, 0, `${formatFmhaBwdProblem(p)}: ${r.tensor} ${r.wrong}/${r.checked} elements off; first: ${r.first}`);
  return { dQ, summary: results.map((r) => `${r.tensor} max |err| ${r.maxAbsErr.toExponential(2)}`).join(', ') };
}

/** Launches `repeats − 1` more times from a NaN-filled dQ; each dQ must equal `dQ` bit for bit. */
function checkRepeats(launch: () => void, out: DeviceBuffer, dQ: Uint16Array, repeats: number | undefined): string {
  if (repeats === undefined) return '';
  for (let i = 1; i < repeats; i++) {
    out.fill(0xff);
    launch();
    const diff = deviceBits16(out).findIndex((x, j) => x !== dQ[j]);
    assert.equal(diff, -1, `deterministic dQ differs between run 1 and run ${i + 1} at element ${diff}`);
  }
  return `; dQ bitwise identical over ${repeats} runs`;
}

/** Asserts that dq_dk_dv applies the case's score modifier (none without one). */
function checkScoreModifier(runner: FmhaBwdRunner, c: FmhaBwdRunnerGpuCase): void {
  const instance = runner.kernels.dqDkDv.instance;
  assert.equal(instance.policy.scoreModifier?.tag, c.score, `${instance.name} applies ${c.score ?? 'no score modifier'}`);
}

/**
 * Runs case `c` through `FmhaBwdRunner` on device 0 (kernels built once per instance) and checks dQ,
 * dK and dV against `fmhaBwdReference` (the score modifier's reference applied) with
 * `compareFmhaBwd`: gradients and workspace start as NaN, so an element never written fails; with
 * `repeats`, dQ must be bitwise identical over that many runs. Asserts and returns a summary line.
 */
export async function runFmhaBwdRunnerGpuCase(c: FmhaBwdRunnerGpuCase): Promise<string> {
  const p = problemOf(c);
  const score = attentionScoreSetup(c.score, p.nheadQ, FMHA_BWD_GPU_CASE_SOFTCAP);
  const data = fmhaBwdGpuInputs(p);
  const ref = fmhaBwdReference(p, data, score?.reference);
  const device = Device.open(0);
  const runner = await FmhaBwdRunner.create(p, { device, compiler: gpuTestCompiler('fmha-bwd-gpu'), buildKernel });
  checkScoreModifier(runner, c);
  const { bufs, workspace, slopes } = allocate(device, runner, fmhaBwdGpuBuffers(device, p, data, ref), score);
  try {
    if (workspace !== undefined) runner.prepareWorkspace(workspace);
    const run = runner.prepare({ ...bufs, ...(score === undefined ? {} : { scoreModifier: score.kernel(slopes?.ptr) }) });
    run.launch();
    const { dQ, summary } = checkGradients(p, ref, bufs);
    const repeatNote = checkRepeats(() => run.launch(), bufs.dQ, dQ, c.repeats);
    return `${runner.instances.map((i) => i.name).join(' + ')}: ${summary}${repeatNote}`;
  } finally {
    device.synchronize();
    for (const b of [...Object.values(bufs), workspace, slopes]) b?.dispose();
    runner.dispose();
  }
}
