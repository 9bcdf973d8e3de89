import { addressOf, cast, index, pointer, uint32, type Target } from '@tilekit/codegen';
import {
  makeNaiveTensorDescriptorPacked,
  merge,
  passThrough,
  transformTensorDescriptor,
  xor,
  type TensorDescriptor,
} from '@tilekit/layout';
import { getDType, type DTypeName } from '@tilekit/numeric';
import {
  embedEncoding,
  evaluateLoadTile,
  loadTile,
  makeWarpGridEncoding,
  permuteEncodingXs,
  TileDistributionEncoding,
  type DistributedTensor,
  type ThreadBuffers,
  type ThreadScope,
  type TileWindow,
} from '@tilekit/tile';
import { GemmError } from '../errors.ts';
import { mfma32x32x8Atom, type WarpGemmAtom } from '../warp/index.ts';
import { callLeaf } from './blockGemmWgmmaSs.ts';

/** The gfx942 block GEMM was asked for a shape, dtype or wave grid it cannot do. */
export class MfmaBlockGemmPolicyError extends GemmError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-mfma-block-gemm-policy', `${what}: ${rule} (got ${found})`);
  }
}

/** Shape, types and wave grid of {@link MfmaBlockGemm} (CK's block GEMM Problem + Policy, for gfx942). */
export interface MfmaBlockGemmPolicy {
  /** A and B element type (fp32 accumulation): fp16 or bf16. */
  readonly dtype: DTypeName;
  /** Block tile M: a multiple of 32·warpsM. */
  readonly tileM: number;
  /** Block tile N: a multiple of 32·warpsN. */
  readonly tileN: number;
  /** Block tile K: a multiple of 16 (one K16 step = two MFMA 32x32x8 per lane's 16-byte read), at most 64. */
  readonly tileK: number;
  /** Waves (64 lanes) along M and N; the wave id is wave_m·warpsN + wave_n. */
  readonly warpsM: number;
  readonly warpsN: number;
}

/** The LDS bank model of gfx942 (CDNA3): 32 banks of 4 bytes; a 16-byte `ds_read_b128` serves 8 lanes per pass. */
export const GFX942_LDS = Object.freeze({ banks: 32, bankBytes: 4, b128LanesPerPass: 8, bytes: 65536 });

/**
 * CK's `WarpGemmAttributeMfmaIterateK`: the operand fragment of `kIter` back-to-back MFMAs whose
 * per-lane K values are contiguous. In `encoding` (one MFMA's A or B fragment) the Y-owned K digit
 * (the elements a lane holds along K, 4 for 32x32x8) grows to `kIter` times its length; lane
 * groups keep their K digit. Register slice [4·i, 4·i + 4) of a lane is the fragment of MFMA i:
 * lane group g holds K values 8g + 4i + v, so MFMA i sees, relabelled, exactly the atom's K
 * positions (A and B relabelled alike, so the products pair up: property-tested).
 */
export function iterateKEncoding(encoding: TileDistributionEncoding, kX: number, kIter: number): TileDistributionEncoding {
  if (!Number.isSafeInteger(kIter) || kIter < 1)
    throw new MfmaBlockGemmPolicyError('iterateKEncoding kIter', 'must be an integer ≥ 1', String(kIter));
  if (!Number.isSafeInteger(kX) || kX < 0 || kX >= encoding.ndimX)
    throw new MfmaBlockGemmPolicyError('iterateKEncoding kX', `must be an X dim in [0, ${encoding.ndimX})`, String(kX));
  const yRefs = encoding.ysToRhs.filter((r) => r.major === kX + 1);
  const h = encoding.hsLengthss[kX]!;
  if (yRefs.length !== 1 || yRefs[0]!.minor !== h.length - 1) {
    throw new MfmaBlockGemmPolicyError(
      'iterateKEncoding encoding',
      'the K dim must have exactly one Y-owned digit, its least significant one',
      String(encoding),
    );
  }
  const spec = encoding.toSpec();
  return new TileDistributionEncoding({
    ...spec,
    hs: encoding.hsLengthss.map((hs, x) => (x === kX ? hs.map((l, i) => (i === hs.length - 1 ? l * kIter : l)) : [...hs])),
  });
}

/** An MFMA operand tile in LDS: `rows × k` elements, K contiguous in 16-byte chunks, XOR-swizzled per 128-byte line. */
export interface MfmaLdsLayout {
  readonly dtype: DTypeName;
  readonly rows: number;
  readonly k: number;
  readonly elementBytes: number;
  /** (row, k) → element offset; a bijection onto [0, rows·k). */
  readonly descriptor: TensorDescriptor;
  /** 16-byte chunks per row and rows per 128-byte line (the XOR source is the line index). */
  readonly chunksPerRow: number;
  readonly rowsPerLine: number;
  readonly elements: number;
  readonly bytes: number;
}

/**
 * The LDS layout of an MFMA operand tile (rows = M or N, K contiguous), XOR-swizzled rather than
 * padded: rows are packed (no wasted LDS), each row is `k·bytes` ≤ 128 bytes of 16-byte chunks, and
 * chunk q of a row in 128-byte line L is stored at chunk q XOR (L mod chunksPerRow). Why: the
 * fragment read is one 16-byte `ds_read_b128` per lane of 8 K values of rows r..r+7 (lanes of a
 * pass) at the same logical chunk; unswizzled, those 8 rows hit only 128/rowBytes distinct bank
 * quads (a 4-way conflict for 64-byte rows), swizzled they hit all 8 quads of the 32 banks
 * (property-tested with the bank model {@link GFX942_LDS}). The global → LDS writes (whole rows by
 * consecutive lanes) stay conflict-free: a 128-byte line is still written by 8 consecutive lanes.
 * The padding alternative (CK's "3d + padding") wastes LDS and breaks 16-byte alignment of rows.
 * Built with `@tilekit/layout`'s `xor`; the 16-byte chunk stays a contiguous, aligned vector.
 */
export function makeMfmaLdsLayout(spec: { readonly dtype: DTypeName; readonly rows: number; readonly k: number }): MfmaLdsLayout {
  const { dtype, rows, k } = spec;
  const d = getDType(dtype);
  if (d.bits !== 16) throw new MfmaBlockGemmPolicyError('makeMfmaLdsLayout dtype', 'must be a 2-byte type (fp16, bf16)', dtype);
  const elementBytes = 2;
  const e = 16 / elementBytes;
  const rowBytes = k * elementBytes;
  if (!Number.isSafeInteger(k) || k < e || k % e !== 0 || rowBytes > 128 || 128 % rowBytes !== 0) {
    throw new MfmaBlockGemmPolicyError(
      'makeMfmaLdsLayout k',
      'rows must be 16, 32, 64 or 128 bytes (k a multiple of 8, at most 64)',
      String(k),
    );
  }
  const chunks = rowBytes / 16;
  const rowsPerLine = 128 / rowBytes;
  if (!Number.isSafeInteger(rows) || rows < 1 || rows % (rowsPerLine * chunks) !== 0) {
    throw new MfmaBlockGemmPolicyError(
      'makeMfmaLdsLayout rows',
      `must be a positive multiple of ${rowsPerLine * chunks} (the swizzle period)`,
      String(rows),
    );
  }
  const lines = rows / rowsPerLine;
  // [line, row in line, chunk, element in chunk]: chunk ^= line mod chunks.
  const base = makeNaiveTensorDescriptorPacked([lines, rowsPerLine, chunks, e]);
  const swz = transformTensorDescriptor(
    base,
    [xor([lines, chunks]), passThrough(rowsPerLine), passThrough(e)],
    [[0, 2], [1], [3]],
    [[0, 2], [1], [3]],
  );
  const descriptor = transformTensorDescriptor(
    swz,
    [merge([lines, rowsPerLine]), merge([chunks, e])],
    [
      [0, 1],
      [2, 3],
    ],
    [[0], [1]],
  );
  return {
    dtype,
    rows,
    k,
    elementBytes,
    descriptor,
    chunksPerRow: chunks,
    rowsPerLine,
    elements: rows * k,
    bytes: rows * k * elementBytes,
  };
}

/**
 * The gfx942 block GEMM with A and B in LDS and C in registers (CK's `BlockGemmASmemBSmemCRegV1`
 * with the `TransposedCDistribution` MFMA warp GEMM): a grid of `warpsM × warpsN` wave64s, each
 * computing `mIter × nIter` tiles of 32×32 with `v_mfma_f32_32x32x8{f16,bf16_1k}`
 * ({@link mfma32x32x8Atom}), two per K16 step (IterateK: one 16-byte LDS read per lane and operand).
 * Transposed C: the MFMA computes Cᵀ = B·Aᵀ (B's fragment is the MFMA's A operand), so each lane
 * holds runs of 4 consecutive N values (8-byte stores in the epilogue).
 * - `aEncoding` (tileM × tileK): wave grid (M waves own rows, N waves replicate: R) ⊗ the atom's B
 *   fragment viewed M×K, IterateK ×2; `bEncoding` (tileN × tileK) likewise from the atom's A fragment.
 * - `cEncoding` (tileM × tileN, fp32): wave grid ⊗ the atom's C fragment with its X dims swapped.
 * Postcondition (property-tested by {@link evaluateMfmaBlockGemm} against `referenceGemm`): the
 * accumulator's element at X index (m, n) is Σ_k A[m][k]·B[n][k] over the K tile.
 */
export class MfmaBlockGemm {
  readonly policy: MfmaBlockGemmPolicy;
  readonly atom: WarpGemmAtom;
  readonly mIter: number;
  readonly nIter: number;
  /** K16 steps per K tile (two MFMAs each). */
  readonly kSteps: number;
  /** MFMAs per K16 step (IterateK). */
  readonly kIter = 2;
  readonly waves: number;
  readonly threads: number;
  readonly aEncoding: TileDistributionEncoding;
  readonly bEncoding: TileDistributionEncoding;
  readonly cEncoding: TileDistributionEncoding;
  readonly aLds: MfmaLdsLayout;
  readonly bLds: MfmaLdsLayout;

  constructor(policy: MfmaBlockGemmPolicy) {
    const { dtype, tileM, tileN, tileK, warpsM, warpsN } = policy;
    if (dtype !== 'fp16' && dtype !== 'bf16')
      throw new MfmaBlockGemmPolicyError('MfmaBlockGemm dtype', 'must be fp16 or bf16', String(dtype));
    for (const [what, v] of [
      ['warpsM', warpsM],
      ['warpsN', warpsN],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 1 || v > 16)
        throw new MfmaBlockGemmPolicyError(`MfmaBlockGemm ${what}`, 'must be an integer in [1, 16]', String(v));
    }
    if (warpsM * warpsN * 64 > 1024)
      throw new MfmaBlockGemmPolicyError('MfmaBlockGemm waves', 'warpsM · warpsN · 64 must be at most 1024 threads', `${warpsM}·${warpsN}`);
    if (!Number.isSafeInteger(tileM) || tileM < 32 * warpsM || tileM % (32 * warpsM) !== 0)
      throw new MfmaBlockGemmPolicyError('MfmaBlockGemm tileM', `must be a positive multiple of 32·warpsM = ${32 * warpsM}`, String(tileM));
    if (!Number.isSafeInteger(tileN) || tileN < 32 * warpsN || tileN % (32 * warpsN) !== 0)
      throw new MfmaBlockGemmPolicyError('MfmaBlockGemm tileN', `must be a positive multiple of 32·warpsN = ${32 * warpsN}`, String(tileN));
    if (![16, 32, 64].includes(tileK)) throw new MfmaBlockGemmPolicyError('MfmaBlockGemm tileK', 'must be 16, 32 or 64', String(tileK));
    this.policy = Object.freeze({ ...policy });
    this.atom = mfma32x32x8Atom(dtype);
    this.mIter = tileM / (32 * warpsM);
    this.nIter = tileN / (32 * warpsN);
    this.kSteps = tileK / (this.atom.k * this.kIter);
    this.waves = warpsM * warpsN;
    this.threads = 64 * this.waves;
    const a = this.atom.a!.encoding;
    const b = this.atom.b!.encoding;
    // Transposed C: the MFMA's A operand is B (N×K), its B operand is Aᵀ (K×M), viewed here M×K.
    const bWarp = iterateKEncoding(a, 1, this.kIter);
    const aWarp = permuteEncodingXs(iterateKEncoding(b, 0, this.kIter), [1, 0]);
    const cWarp = permuteEncodingXs(this.atom.c.encoding, [1, 0]);
    const grid = makeWarpGridEncoding;
    this.aEncoding = embedEncoding(
      grid({ warps: [warpsM, warpsN], xs: [{ warpAxis: 0, repeat: this.mIter }, { repeat: this.kSteps }] }),
      aWarp,
    );
    this.bEncoding = embedEncoding(
      grid({ warps: [warpsM, warpsN], xs: [{ warpAxis: 1, repeat: this.nIter }, { repeat: this.kSteps }] }),
      bWarp,
    );
    this.cEncoding = embedEncoding(
      grid({
        warps: [warpsM, warpsN],
        xs: [
          { warpAxis: 0, repeat: this.mIter },
          { warpAxis: 1, repeat: this.nIter },
        ],
      }),
      cWarp,
    );
    this.aLds = makeMfmaLdsLayout({ dtype, rows: tileM, k: tileK });
    this.bLds = makeMfmaLdsLayout({ dtype, rows: tileN, k: tileK });
    // The wrapper reads 4 consecutive registers per MFMA operand and updates 16 consecutive accumulators.
    const each = (n: number, f: (i: number) => void): void => {
      for (let i = 0; i < n; i++) f(i);
    };
    each(this.kSteps, (s) =>
      each(this.kIter, (i) => {
        each(this.mIter, (r) => checkRun(this.aEncoding, (j) => [r, s, 4 * i + j], 4));
        each(this.nIter, (c) => checkRun(this.bEncoding, (j) => [c, s, 4 * i + j], 4));
      }),
    );
    each(this.mIter, (r) => each(this.nIter, (c) => checkRun(this.cEncoding, (j) => [r, c, Math.floor(j / 4), j % 4], 16)));
  }

  /** fp32 accumulators per thread (mIter · nIter · 16). */
  get accumulatorsPerThread(): number {
    return this.cEncoding.threadBufferSize;
  }

  /** Thread-buffer index of the first A register of MFMA `i` of K16 step `s` for M repeat `r` (4 consecutive registers). */
  aRegister(r: number, s: number, i: number): number {
    return this.aEncoding.calculateD([r, s, 4 * i]);
  }

  /** Thread-buffer index of the first B register of MFMA `i` of K16 step `s` for N repeat `c`. */
  bRegister(c: number, s: number, i: number): number {
    return this.bEncoding.calculateD([c, s, 4 * i]);
  }

  /** Thread-buffer index of the first of the 16 accumulators of tile (r, c). */
  cRegister(r: number, c: number): number {
    return this.cEncoding.calculateD([r, c, 0, 0]);
  }

  /**
   * Emits one K tile for the calling thread (inside a `threads` region): A and B fragments from
   * the LDS windows into `aFrag`/`bFrag` (`loadTile`: 16-byte reads through the swizzled
   * descriptors), then for each K16 step, M and N repeat, `kIter` MFMAs accumulating into `acc`
   * (the atom's leaf wrapper; D = B-fragment · A-fragment + D, in place).
   */
  emit(
    t: ThreadScope,
    target: Target,
    args: {
      readonly acc: DistributedTensor;
      readonly aLds: TileWindow;
      readonly bLds: TileWindow;
      readonly aFrag: DistributedTensor;
      readonly bFrag: DistributedTensor;
    },
  ): void {
    const { acc, aFrag, bFrag } = args;
    for (const [what, tensor, enc] of [
      ['acc', acc, this.cEncoding],
      ['aFrag', aFrag, this.aEncoding],
      ['bFrag', bFrag, this.bEncoding],
    ] as const) {
      if (!tensor.encoding.equals(enc))
        throw new MfmaBlockGemmPolicyError(`MfmaBlockGemm.emit ${what}`, 'must have the block GEMM distribution', String(tensor.encoding));
    }
    loadTile(t, args.aLds, aFrag);
    loadTile(t, args.bLds, bFrag);
    const wrapper = this.atom.defineWrapper(target);
    const regs = (tensor: DistributedTensor, d: number) =>
      cast(addressOf(index(tensor.registers.variable, d)), pointer(uint32, { const: true }));
    for (let s = 0; s < this.kSteps; s++) {
      for (let r = 0; r < this.mIter; r++) {
        for (let c = 0; c < this.nIter; c++) {
          const dAcc = addressOf(index(acc.registers.variable, this.cRegister(r, c)));
          for (let i = 0; i < this.kIter; i++) {
            t.b.expr(callLeaf(wrapper, [dAcc, regs(bFrag, this.bRegister(c, s, i)), regs(aFrag, this.aRegister(r, s, i)), dAcc]));
          }
        }
      }
    }
  }
}

/** Throws unless the Y indices `ys(0..length-1)` sit at consecutive thread-buffer indices. */
function checkRun(enc: TileDistributionEncoding, ys: (j: number) => number[], length: number): void {
  const d0 = enc.calculateD(ys(0));
  for (let j = 1; j < length; j++) {
    if (enc.calculateD(ys(j)) !== d0 + j)
      throw new MfmaBlockGemmPolicyError(
        'MfmaBlockGemm',
        'MFMA operand registers must be consecutive in the thread buffer',
        `${String(enc)} at [${ys(0).join(', ')}]`,
      );
  }
}

/**
 * One `v_mfma_f32_32x32x8` for a wave, from the atom's fragment tables (the golden-tested AMD
 * register map): D[i][j] = C[i][j] + Σ_k A[i][k]·B[k][j], with A[i][k] in lane/element
 * `atom.a.ownerOf([i, k])` of `aLanes` (64 lanes × 4 values), likewise B and C/D (16 values).
 * Sums in double, then fp32 (the hardware's fp32 accumulation of exact fp16 products of small
 * integers is exact: the tests use such inputs).
 */
export function evaluateMfma(
  atom: WarpGemmAtom,
  aLanes: readonly (readonly number[])[],
  bLanes: readonly (readonly number[])[],
  cLanes: readonly (readonly number[])[],
): number[][] {
  const A = atom.a!;
  const B = atom.b!;
  const out = Array.from({ length: 64 }, () => new Array<number>(atom.c.elementsPerThread).fill(0));
  for (let lane = 0; lane < 64; lane++) {
    for (let e = 0; e < atom.c.elementsPerThread; e++) {
      const [i, j] = atom.c.elementXIndex(lane, e) as [number, number];
      let sum = cLanes[lane]![e]!;
      for (let k = 0; k < atom.k; k++) {
        const [la, va] = A.ownerOf([i, k]);
        const [lb, vb] = B.ownerOf([k, j]);
        sum += aLanes[la]![va]! * bLanes[lb]![vb]!;
      }
      out[lane]![e] = Math.fround(sum);
    }
  }
  return out;
}

/**
 * The TS model of {@link MfmaBlockGemm.emit} on numbers: the fragments are what `loadTile` reads
 * from `aLdsMemory`/`bLdsMemory` (`evaluateLoadTile` through the LDS descriptors), and every MFMA is
 * {@link evaluateMfma} on the register slices the emitted code passes. Returns `acc` updated
 * (a copy): what each thread's accumulators hold after the K tile.
 */
export function evaluateMfmaBlockGemm(
  block: MfmaBlockGemm,
  aLdsMemory: readonly number[],
  bLdsMemory: readonly number[],
  acc: ThreadBuffers,
): ThreadBuffers {
  const aFrag = evaluateLoadTile({ descriptor: block.aLds.descriptor, encoding: block.aEncoding, origin: [0, 0] }, aLdsMemory);
  const bFrag = evaluateLoadTile({ descriptor: block.bLds.descriptor, encoding: block.bEncoding, origin: [0, 0] }, bLdsMemory);
  const out = acc.map((row) => [...row]);
  const slice = (buf: ThreadBuffers, wave: number, d0: number, n: number): number[][] =>
    Array.from({ length: 64 }, (_, l) => buf[wave * 64 + l]!.slice(d0, d0 + n));
  for (let wave = 0; wave < block.waves; wave++) {
    for (let s = 0; s < block.kSteps; s++) {
      for (let r = 0; r < block.mIter; r++) {
        for (let c = 0; c < block.nIter; c++) {
          const dc = block.cRegister(r, c);
          for (let i = 0; i < block.kIter; i++) {
            const d = evaluateMfma(
              block.atom,
              slice(bFrag, wave, block.bRegister(c, s, i), 4),
              slice(aFrag, wave, block.aRegister(r, s, i), 4),
              slice(out, wave, dc, 16),
            );
            d.forEach((vals, l) => vals.forEach((v, e) => (out[wave * 64 + l]![dc + e] = v)));
          }
        }
      }
    }
  }
  return out;
}
