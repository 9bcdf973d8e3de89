import type { TargetName } from '@tilekit/codegen';
import { getDType, type DTypeName } from '@tilekit/numeric';
import { checkIndex, type TileDistributionEncoding } from '../tileDistributionEncoding.ts';

/** Which matrix of `D = A·B + C` a fragment holds; `fragment` for data movement (ldmatrix). */
export type FragmentOperand = 'A' | 'B' | 'C' | 'fragment';

/** Constructor argument of {@link FragmentAtom}. */
export interface FragmentAtomSpec {
  readonly name: string;
  readonly instruction: string;
  readonly target: TargetName;
  readonly operand: FragmentOperand;
  readonly dtype: DTypeName;
  readonly xNames: readonly string[];
  readonly encoding: TileDistributionEncoding;
  readonly reference: string;
}

/**
 * A hardware fragment layout as a tile distribution encoding: which thread of the cooperating group
 * (warp, warpgroup, wavefront) holds which matrix element in which register slot. The thread-buffer
 * index d of the encoding is the ISA's fragment element index (a0, a1, … / c0, c1, …; for MFMA
 * 2·GPR + half), so `elementXIndex(t, i)` must equal the ISA table cell by cell (golden tests).
 * X dims follow the ISA's matrix shapes: A is M×K, B is K×N, C/D is M×N.
 */
export class FragmentAtom {
  /** Short unique name, e.g. `mma.m16n8k16.f16.A`. */
  readonly name: string;
  /** The instruction (PTX or AMDGPU mnemonic) this fragment feeds or comes from. */
  readonly instruction: string;
  /** Oldest tilekit target that has the instruction. */
  readonly target: TargetName;
  readonly operand: FragmentOperand;
  readonly dtype: DTypeName;
  /** Names of the X dims, e.g. `['m', 'k']`. */
  readonly xNames: readonly string[];
  /** P dims: [lane] for a warp or wavefront, [warp, lane] for a warpgroup. */
  readonly encoding: TileDistributionEncoding;
  /** Where the layout is specified (e.g. `PTX ISA 9.7.14.5.8, Figure 79`). */
  readonly reference: string;

  constructor(spec: FragmentAtomSpec) {
    this.name = spec.name;
    this.instruction = spec.instruction;
    this.target = spec.target;
    this.operand = spec.operand;
    this.dtype = spec.dtype;
    this.xNames = [...spec.xNames];
    this.encoding = spec.encoding;
    this.reference = spec.reference;
  }

  /** Threads that cooperate (32, 64 or 128). */
  get threads(): number {
    return this.encoding.numThreads;
  }

  /** Matrix shape [rows, cols]. */
  get shape(): readonly number[] {
    return this.encoding.xLengths;
  }

  /** Elements each thread holds. */
  get elementsPerThread(): number {
    return this.encoding.threadBufferSize;
  }

  /** 32-bit registers each thread holds the elements in (packed, element 0 in the low bits). */
  get registersPerThread(): number {
    return this.encoding.registersPerThread(getDType(this.dtype).bits);
  }

  /** [row, col] of element `element` held by thread `thread` (thread = warp·32 + lane for a warpgroup). */
  elementXIndex(thread: number, element: number): number[] {
    checkIndex(`${this.name} thread`, [this.threads], [thread]);
    return this.encoding.calculateXIndexFromD(this.encoding.partitionIndexOf(thread), element);
  }

  /** [thread, element] that holds [row, col] (fragments have no replicas: exactly one). */
  ownerOf(x: readonly number[]): [number, number] {
    const [o] = this.encoding.owners(x);
    return [this.encoding.threadOf(o!.ps), o!.d];
  }

  toString(): string {
    return `${this.name} (${this.instruction}): ${this.xNames.map((n, i) => `${n}=${this.shape[i]}`).join(' × ')}, ${this.threads} threads × ${this.elementsPerThread} ${this.dtype} in ${this.registersPerThread} registers`;
  }
}
