// The CUDA executor of @tilekit/fmha's pure FmhaBwdLauncher, for any backward operator: device
// copies and fills through the registered workspace buffers, the row kernels (dot_do_o, convert_dq)
// through their packers, and the operator's own dq_dk_dv launch through a hook.
import type { FmhaBwdExecutor, FmhaBwdStageLaunch } from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';
import type { DeviceBuffer, Stream } from '@tilekit/runtime';
import type { FmhaBwdConvertDqInstance } from './fmhaBwdConvertDq.ts';
import type { FmhaBwdDotDoOInstance } from './fmhaBwdDotDoO.ts';
import type { FmhaBwdKernel } from './fmhaBwdKernel.ts';
import { packFmhaBwdConvertDq, packFmhaBwdDotDoO } from './fmhaBwdRowLaunches.ts';

/** The compiled row kernels of one backward (convert_dq absent when dq_dk_dv writes dQ directly). */
export interface FmhaBwdRowKernels {
  readonly dotDoO: FmhaBwdKernel<FmhaBwdDotDoOInstance>;
  readonly convertDq: FmhaBwdKernel<FmhaBwdConvertDqInstance> | null;
}

/** Enqueues the operator's dq_dk_dv stage (its packer, its kernel). */
export type FmhaBwdDqDkDvLaunch = (launch: Extract<FmhaBwdStageLaunch, { stage: 'dqDkDv' }>, stream: Stream | undefined) => void;

/**
 * Device copies and fills go through the `DeviceBuffer` that holds the address (a workspace
 * registered with `register`; an address in no registered buffer is an `ArgumentError`), row
 * kernels through `packFmhaBwdDotDoO`/`packFmhaBwdConvertDq`, dq_dk_dv through `dqDkDv`.
 */
export class FmhaBwdCudaExecutor implements FmhaBwdExecutor<Stream | undefined> {
  readonly rows: FmhaBwdRowKernels;
  readonly #dqDkDv: FmhaBwdDqDkDvLaunch;
  readonly #buffers = new Set<DeviceBuffer>();

  constructor(rows: FmhaBwdRowKernels, dqDkDv: FmhaBwdDqDkDvLaunch) {
    this.rows = rows;
    this.#dqDkDv = dqDkDv;
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
    const k = this.rows;
    switch (l.stage) {
      case 'dotDoO':
        k.dotDoO.launch(packFmhaBwdDotDoO(k.dotDoO.instance, l.traits, l.args), stream);
        return;
      case 'dqDkDv':
        this.#dqDkDv(l, stream);
        return;
      case 'convertDq':
        if (k.convertDq === null)
          throw new ArgumentError('launch.stage', 'convertDq needs a convert_dq kernel: this triple writes dQ directly', l.stage);
        k.convertDq.launch(packFmhaBwdConvertDq(k.convertDq.instance, l.traits, l.args), stream);
        return;
    }
  }
}
