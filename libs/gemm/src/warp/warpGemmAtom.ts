import type { FunctionDef, Target, TargetName } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import type { FragmentAtom } from '@tilekit/tile';
import { WarpGemmAtomError } from '../errors.ts';
import type { OperandMajor } from '../smemLayouts.ts';

/** The instruction family of a warp GEMM atom. */
export type WarpGemmKind = 'mma.sync' | 'wgmma' | 'mfma';
/** Where an operand comes from: a register fragment, or shared memory through a matrix descriptor. */
export type OperandSource = 'registers' | 'shared';

/** Constructor argument of {@link WarpGemmAtom}. */
export interface WarpGemmAtomSpec {
  readonly kind: WarpGemmKind;
  readonly instruction: string;
  readonly targets: readonly TargetName[];
  readonly aType: DTypeName;
  readonly bType: DTypeName;
  readonly accType: DTypeName;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly threads: number;
  readonly aSource: OperandSource;
  readonly bSource: OperandSource;
  readonly a: FragmentAtom | null;
  readonly b: FragmentAtom | null;
  readonly c: FragmentAtom;
  readonly wrapperName: string;
  readonly reference: string;
  /** Contiguous dim of a shared-memory A (default K; wgmma's imm-trans-a = 1 for MN). */
  readonly aMajor?: OperandMajor;
  /** Contiguous dim of a shared-memory B (default K; wgmma's imm-trans-b = 1 for MN). */
  readonly bMajor?: OperandMajor;
  /** Fills the wrapper for `target` (already checked to be one of `targets`). */
  readonly define: (atom: WarpGemmAtom, target: Target) => FunctionDef;
}

/**
 * One warp-level (warp, warpgroup or wavefront) MMA instruction, D = A·B + C, paired with the
 * fragment encodings of its register operands from `@tilekit/tile` (CK-tile's
 * `WarpGemmAttribute*Impl`): the instruction, its shape and dtypes, which threads cooperate, and
 * `defineWrapper(target)` — the leaf `__device__` function that issues the instruction (inline PTX,
 * or a clang builtin on gfx942). Operand counts of the wrapper come from the fragments
 * (`registersPerThread`, `elementsPerThread`), so wrapper and layout cannot disagree.
 */
export class WarpGemmAtom {
  readonly kind: WarpGemmKind;
  /** The full mnemonic, e.g. `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`. */
  readonly instruction: string;
  /** The tilekit targets that have the instruction. */
  readonly targets: readonly TargetName[];
  readonly aType: DTypeName;
  readonly bType: DTypeName;
  readonly accType: DTypeName;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Threads that issue it together: 32 (warp), 128 (warpgroup), 64 (wavefront). */
  readonly threads: number;
  readonly aSource: OperandSource;
  readonly bSource: OperandSource;
  /** A (M×K) register fragment; `null` when A is read from shared memory through a descriptor. */
  readonly a: FragmentAtom | null;
  /** B (K×N) register fragment; `null` when B is read from shared memory through a descriptor. */
  readonly b: FragmentAtom | null;
  /** The C/D (M×N) accumulator fragment. */
  readonly c: FragmentAtom;
  /** Which dim of A is contiguous in shared memory (`K` for register operands and K-major tiles). */
  readonly aMajor: OperandMajor;
  /** Which dim of B is contiguous in shared memory (`K` for register operands and K-major tiles). */
  readonly bMajor: OperandMajor;
  /** The C++ name of the emitted wrapper. */
  readonly wrapperName: string;
  /** Where the instruction and its layouts are specified. */
  readonly reference: string;
  readonly #define: (atom: WarpGemmAtom, target: Target) => FunctionDef;

  constructor(spec: WarpGemmAtomSpec) {
    this.kind = spec.kind;
    this.instruction = spec.instruction;
    this.targets = [...spec.targets];
    this.aType = spec.aType;
    this.bType = spec.bType;
    this.accType = spec.accType;
    this.m = spec.m;
    this.n = spec.n;
    this.k = spec.k;
    this.threads = spec.threads;
    this.aSource = spec.aSource;
    this.bSource = spec.bSource;
    this.a = spec.a;
    this.b = spec.b;
    this.c = spec.c;
    this.aMajor = spec.aMajor ?? 'K';
    this.bMajor = spec.bMajor ?? 'K';
    this.wrapperName = spec.wrapperName;
    this.reference = spec.reference;
    this.#define = spec.define;
  }

  /** A short name: `${kind} m×n×k aType·bType→accType`. */
  get name(): string {
    return `${this.kind} ${this.m}x${this.n}x${this.k} ${this.aType}*${this.bType}->${this.accType}`;
  }

  /**
   * The leaf wrapper for `target` (one of `targets`, else `WarpGemmAtomError`). The one place in
   * tilekit where the instruction is spelled as a string: a single inline-asm statement (or builtin
   * call) whose operand list is generated from the fragments.
   */
  defineWrapper(target: Target): FunctionDef {
    if (!this.targets.includes(target.name))
      throw new WarpGemmAtomError(`${this.name} wrapper`, `target must be one of ${this.targets.join(', ')}`, target.name);
    return this.#define(this, target);
  }

  toString(): string {
    return `${this.name} (${this.instruction}) on ${this.targets.join('/')}`;
  }
}
