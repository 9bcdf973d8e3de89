// The CUDA executor of @tilekit/fmha's pure FmhaBwdLauncher, for any backward operator: device
// copies and fills through the registered workspace buffers, the row kernels (dot_do_o, convert_dq)
// through their packers and the operator's own dq_dk_dv through its packer, each stage's packing
// kept for the frozen args a runner prepares.
import type { CheckedFmhaBwdTraits, FmhaBwdArgs, FmhaBwdExecutor, FmhaBwdStageLaunch, FmhaBwdWorkspace } from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';
import type { DeviceBuffer, Stream } from '@tilekit/runtime';
import type { FmhaBwdConvertDqInstance } from './fmhaBwdConvertDq.ts';
import type { FmhaBwdDotDoOInstance } from './fmhaBwdDotDoO.ts';
import type { FmhaBwdKernel, FmhaBwdKernelInstance, FmhaBwdPackedLaunch } from './fmhaBwdKernel.ts';
import { packFmhaBwdConvertDq, packFmhaBwdDotDoO } from './fmhaBwdRowLaunches.ts';

/** The compiled row kernels of one backward (convert_dq absent when dq_dk_dv writes dQ directly). */
export interface FmhaBwdRowKernels {
  readonly dotDoO: FmhaBwdKernel<FmhaBwdDotDoOInstance>;
  readonly convertDq: FmhaBwdKernel<FmhaBwdConvertDqInstance> | null;
}

/** The operator's dq_dk_dv: its kernel and how a launch of it is packed (typed errors for args it cannot take). */
export interface FmhaBwdDqDkDvStage {
  readonly kernel: FmhaBwdKernel<FmhaBwdKernelInstance>;
  pack(traits: CheckedFmhaBwdTraits, workspace: FmhaBwdWorkspace, args: FmhaBwdArgs): FmhaBwdPackedLaunch;
}

/** The stages of a backward launch. */
export type FmhaBwdStage = FmhaBwdStageLaunch['stage'];

/**
 * Device copies and fills go through the `DeviceBuffer` that holds the address (a workspace
 * registered with `register`; an address in no registered buffer is an `ArgumentError`), row
 * kernels through `packFmhaBwdDotDoO`/`packFmhaBwdConvertDq`, dq_dk_dv through `dqDkDv.pack`.
 * A stage is packed once per frozen `args` object (what `fmhaBwdRunnerArgs` returns: a runner's
 * `prepare` packs every stage and each `launch` reuses them, TMA maps included); args that are not
 * frozen are packed at every launch.
 */
export class FmhaBwdCudaExecutor implements FmhaBwdExecutor<Stream | undefined> {
  readonly rows: FmhaBwdRowKernels;
  readonly #dqDkDv: FmhaBwdDqDkDvStage;
  readonly #buffers = new Set<DeviceBuffer>();
  readonly #packed = new WeakMap<FmhaBwdArgs, Map<FmhaBwdStage, FmhaBwdPackedLaunch>>();

  constructor(rows: FmhaBwdRowKernels, dqDkDv: FmhaBwdDqDkDvStage) {
    this.rows = rows;
    this.#dqDkDv = dqDkDv;
  }

  /** The stage's kernel (convert_dq: an `ArgumentError` when this triple writes dQ directly). */
  #kernel(stage: FmhaBwdStage): FmhaBwdKernel<FmhaBwdKernelInstance> {
    if (stage === 'dotDoO') return this.rows.dotDoO;
    if (stage === 'dqDkDv') return this.#dqDkDv.kernel;
    if (this.rows.convertDq === null)
      throw new ArgumentError('launch.stage', 'convertDq needs a convert_dq kernel: this triple writes dQ directly', stage);
    return this.rows.convertDq;
  }

  #packStage(stage: FmhaBwdStage, traits: CheckedFmhaBwdTraits, workspace: FmhaBwdWorkspace, args: FmhaBwdArgs): FmhaBwdPackedLaunch {
    const k = this.rows;
    if (stage === 'dotDoO') return packFmhaBwdDotDoO(k.dotDoO.instance, traits, args);
    if (stage === 'dqDkDv') return this.#dqDkDv.pack(traits, workspace, args);
    const convert = this.#kernel(stage) as FmhaBwdKernel<FmhaBwdConvertDqInstance>;
    return packFmhaBwdConvertDq(convert.instance, traits, args);
  }

  /** The stage's packed launch for `args` (packed once per frozen args; typed errors for args the stage cannot take). */
  pack(stage: FmhaBwdStage, traits: CheckedFmhaBwdTraits, workspace: FmhaBwdWorkspace, args: FmhaBwdArgs): FmhaBwdPackedLaunch {
    if (!Object.isFrozen(args)) return this.#packStage(stage, traits, workspace, args);
    let stages = this.#packed.get(args);
    if (stages === undefined) this.#packed.set(args, (stages = new Map()));
    let packed = stages.get(stage);
    if (packed === undefined) stages.set(stage, (packed = this.#packStage(stage, traits, workspace, args)));
    return packed;
  }

  /** Makes `buffer` reachable by copyToDevice/fillZero. */
  register(buffer: DeviceBuffer): void {
    this.#buffers.add(buffer);
  }

  #holding(dst: bigint, bytes: number): { buffer: DeviceBuffer; offset: number } {
    for (const buffer of this.#buffers) {
      if (buffer.disposed) continue;
      const offset = dst - buffer.ptr;
      if (offset >= 0n && offset + BigInt(bytes) <= BigInt(buffer.bytes)) return { buffer, offset: Number(offset) };
    }
    throw new ArgumentError('dst', 'must lie in a workspace buffer registered with the executor', `0x${dst.toString(16)} + ${bytes} bytes`);
  }

  copyToDevice(dst: bigint, bytes: Uint8Array, stream: Stream | undefined): void {
    const { buffer, offset } = this.#holding(dst, bytes.byteLength);
    buffer.copyFromHost(bytes, { offset, ...(stream ? { stream } : {}) });
  }

  fillZero(dst: bigint, byteCount: number, stream: Stream | undefined): void {
    if (byteCount === 0) return;
    const { buffer, offset } = this.#holding(dst, byteCount);
    buffer.fill(0, { offset, bytes: byteCount, ...(stream ? { stream } : {}) });
  }

  launch(l: FmhaBwdStageLaunch, stream: Stream | undefined): void {
    this.#kernel(l.stage).launch(this.pack(l.stage, l.traits, l.workspace, l.args), stream);
  }
}
