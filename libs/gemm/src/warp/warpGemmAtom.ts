import { defineFunction, float32, int32, pointer, uint32, uint64, type FunctionDef, type Target, type TargetName } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { embedEncoding, FragmentAtom, makeWarpGridEncoding, mfmaAtoms, mmaSyncAtoms, wgmmaAccumulatorAtom } from '@tilekit/tile';
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

const ptxType: Partial<Record<DTypeName, string>> = { fp16: 'f16', bf16: 'bf16' };

function inputPtx(what: string, dtype: DTypeName): string {
  const p = ptxType[dtype];
  if (p === undefined) throw new WarpGemmAtomError(what, 'input dtype must be fp16 or bf16', dtype);
  return p;
}

/** `%first, ..., %(first+count-1)` as a brace list. */
function regList(first: number, count: number): string {
  return `{${Array.from({ length: count }, (_, i) => `%${first + i}`).join(', ')}}`;
}

/** `"c"(name[0]), "c"(name[1]), ...` */
function operands(constraint: string, name: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `"${constraint}"(${name}[${i}])`);
}

/** Lines of one `asm volatile(...)` statement with wrapped operand lists. */
function asmStatement(
  templateLines: readonly string[],
  outputs: readonly string[],
  inputs: readonly string[],
  clobbers: readonly string[] = [],
): string[] {
  const chunk = (xs: readonly string[]): string[] => {
    const out: string[] = [];
    for (let i = 0; i < xs.length; i += 8) out.push(xs.slice(i, i + 8).join(', '));
    return out;
  };
  const section = (xs: readonly string[]): string[] =>
    xs.length === 0 ? ['    :'] : chunk(xs).map((l, i, all) => `    ${i === 0 ? ': ' : '  '}${l}${i < all.length - 1 ? ',' : ''}`);
  return [
    'asm volatile(',
    ...(templateLines.length === 0 ? ['    ""'] : templateLines.map((l) => `    ${JSON.stringify(`${l}\n`)}`)),
    ...section(outputs),
    ...section(inputs),
    ...(clobbers.length === 0 ? [] : [`    : ${clobbers.map((c) => JSON.stringify(c)).join(', ')}`]),
    ');',
  ];
}

/**
 * `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` for one warp (sm_80 and later),
 * with the A/B/C fragments of `mmaSyncAtoms('m16n8k16', dtype)` (PTX ISA 9.7.14.5.8). Wrapper:
 * `void tk_mma_m16n8k16_f32_<t>_<t>_f32(float* d, const unsigned int* a, const unsigned int* b,
 * const float* c)`: a/b are the packed `.f16x2`/`.bf16x2` registers (4 and 2), c/d 4 floats.
 */
export function mmaSyncM16n8k16Atom(dtype: DTypeName): WarpGemmAtom {
  const t = inputPtx('mma.sync m16n8k16', dtype);
  const frags = mmaSyncAtoms('m16n8k16', dtype);
  return new WarpGemmAtom({
    kind: 'mma.sync',
    instruction: frags.instruction,
    targets: ['sm_80', 'sm_90a'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: frags.m,
    n: frags.n,
    k: frags.k,
    threads: 32,
    aSource: 'registers',
    bSource: 'registers',
    a: frags.a,
    b: frags.b,
    c: frags.c,
    wrapperName: `tk_mma_m16n8k16_f32_${t}_${t}_f32`,
    reference: `PTX ISA 9.7.14.5.14 "mma" (#warp-level-matrix-instructions-mma); fragments ${frags.a.reference.replace(/, multiplicand A$/, '')}`,
    define: (atom, target) => {
      target.require('mma-sync');
      const na = atom.a!.registersPerThread;
      const nb = atom.b!.registersPerThread;
      const nc = atom.c.elementsPerThread;
      return defineFunction(
        {
          name: atom.wrapperName,
          qualifiers: target.functionQualifiers('force'),
          params: {
            d: pointer(float32),
            a: pointer(uint32, { const: true }),
            b: pointer(uint32, { const: true }),
            c: pointer(float32, { const: true }),
          },
        },
        (b) => {
          b.comment(`${atom.instruction}: D (${nc} f32) = A (${na} x .${t}x2) * B (${nb} x .${t}x2) + C`);
          b.verbatim(
            asmStatement(
              [`${atom.instruction} ${regList(0, nc)}, ${regList(nc, na)}, ${regList(nc + na, nb)}, ${regList(nc + na + nb, nc)};`],
              operands('=f', 'd', nc),
              [...operands('r', 'a', na), ...operands('r', 'b', nb), ...operands('f', 'c', nc)],
            ),
          );
        },
      );
    },
  });
}

/** Arguments of {@link wgmmaAtom}. */
export interface WgmmaAtomSpec {
  /** N of m64nNk16: a multiple of 8 in [8, 256]; int8 (m64nNk32): one of {@link wgmmaInt8Ns}. */
  readonly n: number;
  /** fp16 or bf16 (A and B alike, fp32 D), or int8 (s8·s8 → s32 D; K-major A and B from shared memory only). */
  readonly dtype: DTypeName;
  /** Contiguous dim of A in shared memory (imm-trans-a = 0 for K, 1 for M); default K. */
  readonly aMajor?: OperandMajor;
  /** Contiguous dim of B in shared memory (imm-trans-b = 0 for K, 1 for N); default K. */
  readonly bMajor?: OperandMajor;
  /** Where A comes from (default shared memory); from registers A is K-major by definition. */
  readonly aSource?: OperandSource;
}

/**
 * The register fragment of A for `wgmma.mma_async.m64nNk16` with A in registers (PTX ISA
 * 9.7.15.5.1.1.1, Figure 148; CUTLASS `ALayout_64x16`): warp w of the warpgroup holds rows
 * 16w..16w+15 exactly as one warp holds the `mma.sync.m16n8k16` A fragment, so the encoding is a
 * 4-warp grid along M (tile's `makeWarpGridEncoding`) embedded with tile's mma.sync A encoding
 * (P = [warp, lane]; element i of lane l: row 16w + l/4 + 8·((i/2) mod 2), col 2·(l mod 4) + i mod 2 + 8·(i/4)).
 */
export function wgmmaRegisterAFragment(dtype: DTypeName): FragmentAtom {
  const t = inputPtx('wgmma m64nNk16 A', dtype);
  const warp = mmaSyncAtoms('m16n8k16', dtype).a;
  const encoding = embedEncoding(makeWarpGridEncoding({ warps: [4], xs: [{ warpAxis: 0 }, {}] }), warp.encoding);
  return new FragmentAtom({
    name: `wgmma.m64nNk16.${t}.A`,
    instruction: `wgmma.mma_async.sync.aligned.m64nNk16.f32.${t}.${t}`,
    target: 'sm_90a',
    operand: 'A',
    dtype,
    xNames: ['m', 'k'],
    encoding,
    reference:
      'PTX ISA 9.7.15.5.1.1.1 "Matrix Fragments for wgmma.mma_async.m64nNk16" (multiplicand A in registers, Figure 148); CUTLASS ALayout_64x16',
  });
}

/**
 * `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` for one warpgroup (sm_90a),
 * A and B from shared memory through 64-bit matrix descriptors (PTX ISA 9.7.15.5.2
 * "wgmma.mma_async"; descriptors 9.7.15.5.1.2.2), D in registers with the layout of
 * `wgmmaAccumulatorAtom({ n })` (N/2 floats per thread). With `aSource: 'registers'` A is the
 * fragment of {@link wgmmaRegisterAFragment} and the wrapper is `..._rs_k<bMajor>(float* d, const
 * unsigned int* a, unsigned long long desc_b, int scale_d)`. Shared-A wrapper:
 * `void tk_wgmma_m64n<N>k16_f32_<t>_<t>_ss_<aMajor><bMajor>(float* d, unsigned long long desc_a,
 * unsigned long long desc_b, int scale_d)`: D = A·B + (scale_d ? D : 0); imm-scale-a/b = 1.
 * Issue it between {@link defineWgmmaFence} and {@link defineWgmmaCommitGroup} /
 * {@link defineWgmmaWaitGroup}. `dtype: 'int8'` gives the integer form instead: see
 * {@link wgmmaInt8Atom} (`m64nNk32.s32.s8.s8`, k = 32, int32 D, K-major shared A and B only).
 */
export function wgmmaAtom(spec: WgmmaAtomSpec): WarpGemmAtom {
  const { n, dtype } = spec;
  if (dtype === 'int8') return wgmmaInt8Atom(spec);
  const t = inputPtx('wgmma m64nNk16', dtype);
  if (!Number.isSafeInteger(n) || n < 8 || n > 256 || n % 8 !== 0)
    throw new WarpGemmAtomError('wgmma m64nNk16', 'n must be a multiple of 8 in [8, 256]', String(n));
  const aSource = spec.aSource ?? 'shared';
  if (aSource !== 'shared' && aSource !== 'registers')
    throw new WarpGemmAtomError('wgmma aSource', 'must be "shared" or "registers"', String(aSource));
  const aMajor = spec.aMajor ?? 'K';
  if (aSource === 'registers' && aMajor !== 'K')
    throw new WarpGemmAtomError('wgmma aMajor', 'A in registers is K-major (wgmma has no imm-trans-a then)', aMajor);
  const bMajor = spec.bMajor ?? 'K';
  for (const [what, major] of [
    ['aMajor', aMajor],
    ['bMajor', bMajor],
  ] as const) {
    if (major !== 'K' && major !== 'MN') throw new WarpGemmAtomError(`wgmma ${what}`, 'must be "K" or "MN"', String(major));
  }
  const c = wgmmaAccumulatorAtom({ n, dtype: 'fp32' });
  const instruction = `wgmma.mma_async.sync.aligned.m64n${n}k16.f32.${t}.${t}`;
  const majors = `${aMajor === 'K' ? 'k' : 'm'}${bMajor === 'K' ? 'k' : 'n'}`;
  const fromRegisters = aSource === 'registers';
  const a = fromRegisters ? wgmmaRegisterAFragment(dtype) : null;
  return new WarpGemmAtom({
    kind: 'wgmma',
    instruction,
    targets: ['sm_90a'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: 64,
    n,
    k: 16,
    threads: 128,
    aSource,
    bSource: 'shared',
    a,
    b: null,
    c,
    aMajor,
    bMajor,
    wrapperName: `tk_wgmma_m64n${n}k16_f32_${t}_${t}_${fromRegisters ? 'rs' : 'ss'}_${majors}`,
    reference: `PTX ISA 9.7.15.5.2 "wgmma.mma_async" (descriptors 9.7.15.5.1.2.2); D: ${c.reference}`,
    define: (atom, target) => {
      target.require('wgmma');
      const nd = atom.c.elementsPerThread;
      const transA = aMajor === 'K' ? 0 : 1;
      const transB = bMajor === 'K' ? 0 : 1;
      if (atom.a !== null) {
        // A in registers: {a0..a3} (.f16x2/.bf16x2) replace desc_a, and there is no imm-trans-a.
        const na = atom.a.registersPerThread;
        return defineFunction(
          {
            name: atom.wrapperName,
            qualifiers: target.functionQualifiers('force'),
            params: { d: pointer(float32), a: pointer(uint32, { const: true }), desc_b: uint64, scale_d: int32 },
          },
          (b) => {
            b.comment(
              `${instruction}: D (${nd} f32 per thread) = A (${na} x .${t}x2 registers) * B[desc_b] + (scale_d ? D : 0); trans-b ${transB}`,
            );
            b.verbatim(
              asmStatement(
                [
                  '{',
                  '.reg .pred p;',
                  `setp.ne.b32 p, %${nd + na + 1}, 0;`,
                  `${instruction} ${regList(0, nd)}, ${regList(nd, na)}, %${nd + na}, p, 1, 1, ${transB};`,
                  '}',
                ],
                operands('+f', 'd', nd),
                [...operands('r', 'a', na), '"l"(desc_b)', '"r"(scale_d)'],
              ),
            );
          },
        );
      }
      return defineFunction(
        {
          name: atom.wrapperName,
          qualifiers: target.functionQualifiers('force'),
          params: { d: pointer(float32), desc_a: uint64, desc_b: uint64, scale_d: int32 },
        },
        (b) => {
          b.comment(
            `${instruction}: D (${nd} f32 per thread) = A[desc_a] * B[desc_b] + (scale_d ? D : 0); trans-a ${transA}, trans-b ${transB}`,
          );
          b.verbatim(
            asmStatement(
              [
                '{',
                '.reg .pred p;',
                `setp.ne.b32 p, %${nd + 2}, 0;`,
                `${instruction} ${regList(0, nd)}, %${nd}, %${nd + 1}, p, 1, 1, ${transA}, ${transB};`,
                '}',
              ],
              operands('+f', 'd', nd),
              ['"l"(desc_a)', '"l"(desc_b)', '"r"(scale_d)'],
            ),
          );
        },
      );
    },
  });
}

/**
 * The N values of `wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8` (PTX ISA 9.7.15.5.2, the
 * "Integer type" `.shape` list): 8, 16, 24, then every multiple of 16 from 32 to 256.
 */
export const wgmmaInt8Ns: readonly number[] = Object.freeze([8, 16, 24, ...Array.from({ length: 15 }, (_, i) => 32 + 16 * i)]);

/**
 * `wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8` (the `.dtype = .s32` integer form, PTX ISA
 * 9.7.15.5.2) for one warpgroup: A (64×32) and B (32×N) int8 from shared memory through matrix
 * descriptors, both K-major — the integer form has no imm-trans-a/b (transpose exists only for
 * .f16/.bf16) and no imm-scale-a/b (negation is for the float forms), so its operand list is just
 * `d, a-desc, b-desc, scale-d`. D is N/2 int32 registers per thread laid out like the f32 D
 * (`wgmmaAccumulatorAtom({ n, dtype: 'int32' })`). Wrapper: `void
 * tk_wgmma_m64n<N>k32_s32_s8_s8_ss_kk(int* d, unsigned long long desc_a, unsigned long long desc_b,
 * int scale_d)`: D = A·B + (scale_d ? D : 0), wrapping on overflow (no `.satfinite`).
 * Anything else (MN-major, A in registers, an N outside {@link wgmmaInt8Ns}) is a `WarpGemmAtomError`.
 */
function wgmmaInt8Atom(spec: WgmmaAtomSpec): WarpGemmAtom {
  const { n } = spec;
  if (!wgmmaInt8Ns.includes(n))
    throw new WarpGemmAtomError('wgmma m64nNk32 int8', `n must be one of ${wgmmaInt8Ns.join(', ')} (the integer shapes)`, String(n));
  const aSource = spec.aSource ?? 'shared';
  if (aSource !== 'shared')
    throw new WarpGemmAtomError(
      'wgmma int8 aSource',
      'must be "shared" (tilekit models no register-A fragment of m64nNk32)',
      String(aSource),
    );
  for (const [what, major] of [
    ['aMajor', spec.aMajor ?? 'K'],
    ['bMajor', spec.bMajor ?? 'K'],
  ] as const) {
    if (major !== 'K')
      throw new WarpGemmAtomError(
        `wgmma int8 ${what}`,
        'must be "K": the integer wgmma has no imm-trans (transpose is .f16/.bf16 only)',
        String(major),
      );
  }
  const c = wgmmaAccumulatorAtom({ n, dtype: 'int32' });
  const instruction = `wgmma.mma_async.sync.aligned.m64n${n}k32.s32.s8.s8`;
  return new WarpGemmAtom({
    kind: 'wgmma',
    instruction,
    targets: ['sm_90a'],
    aType: 'int8',
    bType: 'int8',
    accType: 'int32',
    m: 64,
    n,
    k: 32,
    threads: 128,
    aSource: 'shared',
    bSource: 'shared',
    a: null,
    b: null,
    c,
    aMajor: 'K',
    bMajor: 'K',
    wrapperName: `tk_wgmma_m64n${n}k32_s32_s8_s8_ss_kk`,
    reference: `PTX ISA 9.7.15.5.2 "wgmma.mma_async" (integer type; descriptors 9.7.15.5.1.2.2); D: ${c.reference}`,
    define: (atom, target) => {
      target.require('wgmma');
      const nd = atom.c.elementsPerThread;
      return defineFunction(
        {
          name: atom.wrapperName,
          qualifiers: target.functionQualifiers('force'),
          params: { d: pointer(int32), desc_a: uint64, desc_b: uint64, scale_d: int32 },
        },
        (b) => {
          b.comment(
            `${instruction}: D (${nd} s32 per thread) = A[desc_a] * B[desc_b] + (scale_d ? D : 0); K-major A and B (no trans/scale immediates)`,
          );
          b.verbatim(
            asmStatement(
              ['{', '.reg .pred p;', `setp.ne.b32 p, %${nd + 2}, 0;`, `${instruction} ${regList(0, nd)}, %${nd}, %${nd + 1}, p;`, '}'],
              operands('+r', 'd', nd),
              ['"l"(desc_a)', '"l"(desc_b)', '"r"(scale_d)'],
            ),
          );
        },
      );
    },
  });
}

/** `wgmma.fence.sync.aligned` (before the first wgmma that reads registers or shared memory written since). */
export function defineWgmmaFence(target: Target): FunctionDef {
  target.require('wgmma');
  return defineFunction({ name: 'tk_wgmma_fence', qualifiers: target.functionQualifiers('force') }, (b) => {
    b.verbatim(asmStatement(['wgmma.fence.sync.aligned;'], [], [], ['memory']));
  });
}

/** `wgmma.commit_group.sync.aligned`: closes the group of wgmma operations issued so far. */
export function defineWgmmaCommitGroup(target: Target): FunctionDef {
  target.require('wgmma');
  return defineFunction({ name: 'tk_wgmma_commit_group', qualifiers: target.functionQualifiers('force') }, (b) => {
    b.verbatim(asmStatement(['wgmma.commit_group.sync.aligned;'], [], [], ['memory']));
  });
}

/** `wgmma.wait_group.sync.aligned N`: waits until at most `pending` groups are in flight (N is an immediate). */
export function defineWgmmaWaitGroup(target: Target, pending: number): FunctionDef {
  target.require('wgmma');
  if (!Number.isInteger(pending) || pending < 0 || pending > 7)
    throw new WarpGemmAtomError('wgmma.wait_group', 'pending must be an integer in [0, 7]', String(pending));
  return defineFunction({ name: `tk_wgmma_wait_group_${pending}`, qualifiers: target.functionQualifiers('force') }, (b) => {
    b.verbatim(asmStatement([`wgmma.wait_group.sync.aligned ${pending};`], [], [], ['memory']));
  });
}

/**
 * `tk_wgmma_fence_operands_<count>(float* d)`: an empty `asm volatile` that reads and writes every
 * accumulator register (CUTLASS's `warpgroup_fence_operand`). wgmma runs asynchronously on
 * registers the compiler believes it owns: call this on D right before `wgmma.fence` and right
 * after `wgmma.wait_group`, so no access to D is scheduled into the window in between. With
 * `accType` int32 (the integer wgmma's D) it is `tk_wgmma_fence_operands_s32_<count>(int* d)` with
 * `"+r"` operands; the fp32 default emits exactly what it always did.
 */
export function defineWgmmaFenceOperands(target: Target, count: number, accType: DTypeName = 'fp32'): FunctionDef {
  target.require('wgmma');
  if (!Number.isInteger(count) || count < 1 || count > 128)
    throw new WarpGemmAtomError('wgmma operand fence', 'count must be an integer in [1, 128] (N/2 of m64nNk16)', String(count));
  if (accType !== 'fp32' && accType !== 'int32')
    throw new WarpGemmAtomError('wgmma operand fence accType', 'must be fp32 or int32 (a 32-bit wgmma accumulator)', String(accType));
  const s32 = accType === 'int32';
  return defineFunction(
    {
      name: `tk_wgmma_fence_operands_${s32 ? 's32_' : ''}${count}`,
      qualifiers: target.functionQualifiers('force'),
      params: { d: pointer(s32 ? int32 : float32) },
    },
    (b) => {
      b.verbatim(asmStatement([], operands(s32 ? '+r' : '+f', 'd', count), [], ['memory']));
    },
  );
}

/**
 * `v_mfma_f32_32x32x8f16` (and `v_mfma_f32_32x32x8bf16_1k` for bf16) for one wave64 (gfx942,
 * CDNA3), with the fragments of `mfmaAtoms('32x32x8', dtype)`. Emitted through the clang builtin
 * `__builtin_amdgcn_mfma_f32_32x32x8f16` (`..._32x32x8bf16_1k`) so the file stays self-contained
 * HIP. Wrapper: `void tk_mfma_f32_32x32x8_<t>(float* d, const unsigned int* a, const unsigned int*
 * b, const float* c)`: a/b the 2 packed registers (4 halves) per lane, c/d the 16 floats.
 */
export function mfma32x32x8Atom(dtype: DTypeName): WarpGemmAtom {
  inputPtx('mfma 32x32x8', dtype);
  const frags = mfmaAtoms('32x32x8', dtype);
  const t = dtype === 'fp16' ? 'f16' : 'bf16';
  const builtin = dtype === 'fp16' ? '__builtin_amdgcn_mfma_f32_32x32x8f16' : '__builtin_amdgcn_mfma_f32_32x32x8bf16_1k';
  const lane = dtype === 'fp16' ? '_Float16' : 'short';
  return new WarpGemmAtom({
    kind: 'mfma',
    instruction: dtype === 'fp16' ? 'v_mfma_f32_32x32x8f16' : 'v_mfma_f32_32x32x8bf16_1k',
    targets: ['gfx942'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: frags.m,
    n: frags.n,
    k: frags.k,
    threads: 64,
    aSource: 'registers',
    bSource: 'registers',
    a: frags.a,
    b: frags.b,
    c: frags.c,
    wrapperName: `tk_mfma_f32_32x32x8_${t}`,
    reference: `AMD CDNA3 ISA "V_MFMA_F32_32X32X8F16" / clang ${builtin}; fragments ${frags.c.reference.replace(/, C\/D matrix$/, '')}`,
    define: (atom, target) => {
      target.require('mfma');
      const na = atom.a!.registersPerThread;
      const nb = atom.b!.registersPerThread;
      const nc = atom.c.elementsPerThread;
      const perReg = 2;
      return defineFunction(
        {
          name: atom.wrapperName,
          qualifiers: target.functionQualifiers('force'),
          params: {
            d: pointer(float32),
            a: pointer(uint32, { const: true }),
            b: pointer(uint32, { const: true }),
            c: pointer(float32, { const: true }),
          },
        },
        (b) => {
          b.comment(`${atom.instruction}: D (${nc} f32) = A (${na} packed regs) * B (${nb} packed regs) + C, one wave64`);
          b.verbatim([
            `typedef ${lane} tk_in_x${na * perReg} __attribute__((ext_vector_type(${na * perReg})));`,
            `typedef unsigned int tk_u32_x${na} __attribute__((ext_vector_type(${na})));`,
            `typedef float tk_f32_x${nc} __attribute__((ext_vector_type(${nc})));`,
            `const tk_u32_x${na} a_bits = {${Array.from({ length: na }, (_, i) => `a[${i}]`).join(', ')}};`,
            `const tk_u32_x${nb} b_bits = {${Array.from({ length: nb }, (_, i) => `b[${i}]`).join(', ')}};`,
            `tk_f32_x${nc} acc;`,
            ...Array.from({ length: nc }, (_, i) => `acc[${i}] = c[${i}];`),
            `acc = ${builtin}(__builtin_bit_cast(tk_in_x${na * perReg}, a_bits), __builtin_bit_cast(tk_in_x${na * perReg}, b_bits), acc, 0, 0, 0);`,
            ...Array.from({ length: nc }, (_, i) => `d[${i}] = acc[${i}];`),
          ]);
        },
      );
    },
  });
}
