// CK-tile's fmha_bwd_launcher, GPU-agnostic: selects the instance triple, owns the workspace
// recipe, and drives an injected executor (the kernels package provides a CUDA one) — so this
// pure library never imports a runtime.
import { ArgumentError } from '@tilekit/numeric';
import { checkFmhaBwdArgs, type FmhaBwdArgs } from './fmhaBwdArgs.ts';
import {
  checkFmhaBwdRecordTriple,
  fmhaBwdTripleMismatches,
  type FmhaBwdConvertDqRecord,
  type FmhaBwdDotDoORecord,
  type FmhaBwdDqDkDvRecord,
  type FmhaBwdRecordCatalog,
  type FmhaBwdRecordTriple,
  type FmhaBwdMismatch,
} from './fmhaBwdRecord.ts';
import { checkFmhaBwdTraits, type CheckedFmhaBwdTraits, type FmhaBwdTraits } from './fmhaBwdTraits.ts';
import { makeFmhaBwdWorkspace, type FmhaBwdWorkspace } from './fmhaBwdWorkspace.ts';

/** A range of device memory (a buffer or a view of one). */
export interface FmhaBwdDeviceRange {
  readonly ptr: bigint;
  readonly bytes: number;
}

/** The three kernels of one backward call, in launch order. */
export const FMHA_BWD_STAGES = ['dotDoO', 'dqDkDv', 'convertDq'] as const;
export type FmhaBwdStage = (typeof FMHA_BWD_STAGES)[number];

/** One kernel launch the launcher asks of its executor. */
export type FmhaBwdStageLaunch =
  | {
      readonly stage: 'dotDoO';
      readonly instance: FmhaBwdDotDoORecord;
      readonly traits: CheckedFmhaBwdTraits;
      readonly workspace: FmhaBwdWorkspace;
      readonly args: FmhaBwdArgs;
    }
  | {
      readonly stage: 'dqDkDv';
      readonly instance: FmhaBwdDqDkDvRecord;
      readonly traits: CheckedFmhaBwdTraits;
      readonly workspace: FmhaBwdWorkspace;
      readonly args: FmhaBwdArgs;
    }
  | {
      readonly stage: 'convertDq';
      readonly instance: FmhaBwdConvertDqRecord;
      readonly traits: CheckedFmhaBwdTraits;
      readonly workspace: FmhaBwdWorkspace;
      readonly args: FmhaBwdArgs;
    };

/**
 * The device operations a launcher needs, all enqueued on `stream` in call order:
 * copy host bytes to device memory, zero device bytes, launch one stage's kernel (its grid and
 * packed arguments are the executor's business: it has the instance, the traits, the workspace
 * layout and the args).
 */
export interface FmhaBwdExecutor<TStream> {
  copyToDevice(dst: bigint, bytes: Uint8Array, stream: TStream): void;
  fillZero(dst: bigint, byteCount: number, stream: TStream): void;
  launch(launch: FmhaBwdStageLaunch, stream: TStream): void;
}

/** How a launcher is built besides its traits. */
export interface FmhaBwdLauncherOptions<TStream> {
  /** The instance triples to choose from, in priority order. */
  readonly catalog: FmhaBwdRecordCatalog;
  readonly executor: FmhaBwdExecutor<TStream>;
  /** SMs of the device (the persistent deterministic batch-mode split count depends on it). */
  readonly smCount: number;
  /** Where the "no instance" warning goes (default console.warn). */
  readonly warn?: (message: string) => void;
}

/** Workspace bytes: `host` (metadata, copied to the head) + `device` (dq_acc) = `total`. */
export interface FmhaBwdWorkspaceSize {
  readonly host: number;
  readonly device: number;
  readonly total: number;
}

const NO_WORKSPACE: FmhaBwdWorkspaceSize = Object.freeze({ host: 0, device: 0, total: 0 });

/**
 * CK-tile's `fmha_bwd_launcher` (unified workspace). Construction validates the traits (a bad
 * trait throws `FmhaBwdTraitsError`) and the catalog (`FmhaBwdCatalogError`), selects the first
 * triple whose predicates all hold (`fmhaBwdTripleMismatches`), and computes the workspace from
 * the selected dq_dk_dv instance's kN0 and accumulation (never re-derived here).
 *
 * When no triple matches, the launcher still constructs: it warns once naming the unmatched traits
 * (of the closest triple), `supported` is false, the workspace size is 0, and `prepareWorkspace` /
 * `run` warn again and do nothing (returning false) — CK's default lambdas.
 *
 * Usage: allocate `workspaceSize.total` bytes, `prepareWorkspace(buffer, stream)` (copies the
 * nsplits/offsets metadata to the head, zeroes dq_acc when the rules require it), then
 * `run({ ...args, workspace: buffer.ptr }, stream)` as often as wanted: a run on a workspace an
 * earlier run already used re-zeroes dq_acc first when required, so repeats stay correct.
 * Postconditions (model-tested with `fc.commands`): every dq_dk_dv launch finds the metadata of
 * this launcher at the head of its workspace and, when `needsZeroDqAcc`, a zeroed dq_acc.
 */
export class FmhaBwdLauncher<TStream = unknown> {
  readonly traits: CheckedFmhaBwdTraits;
  readonly supported: boolean;
  /** The selected triple (null when unsupported). */
  readonly triple: FmhaBwdRecordTriple | null;
  /** The workspace layout (null when unsupported). */
  readonly workspace: FmhaBwdWorkspace | null;
  readonly workspaceSize: FmhaBwdWorkspaceSize;
  /** The unmatched predicates of the closest triple (empty when supported). */
  readonly mismatches: readonly FmhaBwdMismatch[];
  readonly #executor: FmhaBwdExecutor<TStream>;
  readonly #warn: (message: string) => void;
  readonly #warning: string;
  /** Workspaces prepared by this launcher: address → bytes. */
  readonly #prepared = new Map<bigint, number>();
  /** The prepared workspace whose dq_acc no run has used yet (zeroing then already done). */
  #fresh: bigint | null = null;

  constructor(traits: FmhaBwdTraits, options: FmhaBwdLauncherOptions<TStream>) {
    this.traits = checkFmhaBwdTraits(traits);
    if (typeof options !== 'object' || options === null)
      throw new ArgumentError('options', 'must be { catalog, executor, smCount }', options);
    const { catalog, executor } = options;
    if (!Array.isArray(catalog)) throw new ArgumentError('options.catalog', 'must be an array of instance triples', catalog);
    catalog.forEach((triple, i) => checkFmhaBwdRecordTriple(triple, `catalog[${i}]`));
    if (typeof executor !== 'object' || executor === null)
      throw new ArgumentError('options.executor', 'must implement copyToDevice, fillZero and launch', executor);
    if (!Number.isSafeInteger(options.smCount) || options.smCount < 1)
      throw new ArgumentError('options.smCount', 'must be a positive integer (the device’s SMs)', options.smCount);
    this.#executor = executor;
    this.#warn = options.warn ?? ((m: string) => console.warn(m));
    let best: readonly FmhaBwdMismatch[] | null = null;
    let bestName = '';
    let chosen: FmhaBwdRecordTriple | null = null;
    for (const triple of catalog) {
      const miss = fmhaBwdTripleMismatches(triple, this.traits);
      if (miss.length === 0) {
        chosen = triple;
        break;
      }
      if (best === null || miss.length < best.length) {
        best = miss;
        bestName = triple.dqDkDv.name;
      }
    }
    this.triple = chosen;
    this.supported = chosen !== null;
    if (chosen !== null) {
      this.mismatches = Object.freeze([]);
      this.workspace = makeFmhaBwdWorkspace(this.traits, chosen.dqDkDv, options.smCount);
      this.workspaceSize = Object.freeze({
        host: this.workspace.hostBytes,
        device: this.workspace.deviceBytes,
        total: this.workspace.totalBytes,
      });
      this.#warning = '';
    } else {
      this.mismatches = Object.freeze(best ?? []);
      this.workspace = null;
      this.workspaceSize = NO_WORKSPACE;
      const traitsList = [...new Set(this.mismatches.map((m) => m.trait))].join(', ');
      this.#warning =
        catalog.length === 0
          ? 'fmha bwd: no instance for these traits (the catalog is empty); run and prepareWorkspace do nothing'
          : `fmha bwd: no instance for these traits — unmatched ${traitsList} (closest ${bestName}: ${this.mismatches.map((m) => m.reason).join('; ')}); run and prepareWorkspace do nothing`;
      this.#warn(this.#warning);
    }
  }

  /**
   * Copies the metadata to the head of `deviceBuffer` and zeroes dq_acc when required; nothing
   * when the workspace size is 0. Returns false (after a warning) when unsupported.
   * @throws ArgumentError `deviceBuffer` when it is not a 16-byte-aligned range of at least
   * `workspaceSize.total` bytes.
   */
  prepareWorkspace(deviceBuffer: FmhaBwdDeviceRange, stream: TStream): boolean {
    if (this.workspace === null) {
      this.#warn(this.#warning);
      return false;
    }
    const ws = this.workspace;
    if (ws.totalBytes === 0) return true;
    if (
      typeof deviceBuffer !== 'object' ||
      deviceBuffer === null ||
      typeof deviceBuffer.ptr !== 'bigint' ||
      !Number.isSafeInteger(deviceBuffer.bytes)
    ) {
      throw new ArgumentError('deviceBuffer', 'must be a device range { ptr: bigint, bytes }', deviceBuffer);
    }
    if (deviceBuffer.ptr <= 0n || deviceBuffer.ptr % 16n !== 0n)
      throw new ArgumentError('deviceBuffer.ptr', 'must be a non-null address aligned to 16 bytes', `0x${deviceBuffer.ptr.toString(16)}`);
    if (deviceBuffer.bytes < ws.totalBytes)
      throw new ArgumentError('deviceBuffer.bytes', `must be at least workspaceSize.total = ${ws.totalBytes}`, deviceBuffer.bytes);
    this.#executor.copyToDevice(deviceBuffer.ptr, ws.hostImage(), stream);
    if (ws.needsZeroDqAcc) this.#executor.fillZero(deviceBuffer.ptr + BigInt(ws.dqAccOffset), ws.deviceBytes, stream);
    this.#prepared.set(deviceBuffer.ptr, deviceBuffer.bytes);
    this.#fresh = deviceBuffer.ptr;
    return true;
  }

  /**
   * Launches dot_do_o, dq_dk_dv and (unless dQ is written directly) convert_dq on `stream`,
   * re-zeroing dq_acc first when required and an earlier run used this workspace. Returns false
   * (after a warning) when unsupported.
   * @throws FmhaBwdArgsError for bad args (see `checkFmhaBwdArgs`); ArgumentError `args.workspace`
   * when it was not prepared by this launcher.
   */
  run(args: FmhaBwdArgs, stream: TStream): boolean {
    if (this.workspace === null || this.triple === null) {
      this.#warn(this.#warning);
      return false;
    }
    const ws = this.workspace;
    checkFmhaBwdArgs(this.traits, args, ws.totalBytes);
    if (ws.totalBytes > 0) {
      const bytes = this.#prepared.get(args.workspace);
      if (bytes === undefined)
        throw new ArgumentError(
          'args.workspace',
          'must be a buffer prepared by this launcher’s prepareWorkspace',
          `0x${args.workspace.toString(16)}`,
        );
      if (ws.needsZeroDqAcc && this.#fresh !== args.workspace)
        this.#executor.fillZero(args.workspace + BigInt(ws.dqAccOffset), ws.deviceBytes, stream);
      this.#fresh = null;
    }
    const common = { traits: this.traits, workspace: ws, args };
    const { dotDoO, dqDkDv, convertDq } = this.triple;
    this.#executor.launch({ stage: 'dotDoO', instance: dotDoO, ...common }, stream);
    this.#executor.launch({ stage: 'dqDkDv', instance: dqDkDv, ...common }, stream);
    if (convertDq !== null) this.#executor.launch({ stage: 'convertDq', instance: convertDq, ...common }, stream);
    return true;
  }
}
