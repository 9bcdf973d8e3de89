// A CPU model of the FFPA backward's decomposition (FmhaBwdSm80SplitDPipeline as FfpaBwdInstance
// launches it), in float64: the same grid (key tile × column slice, key head, batch), the same ring
// order (splitDBwdLoadOf decodes every step), the same query-tile range per key tile, the same
// 64-column chunks of d and d_v and the same slice columns. It does not model rounding (P and dS
// stay float64): compared with referenceAttentionBwd it checks the decomposition, not the precision.
import {
  attentionLseIndex,
  attentionRowOffset,
  FMHA_BWD_SM80_SPLIT_D_CHUNK,
  makeGenericAttentionMask,
  packedAttentionStrides,
  resolveAttentionBwdArgs,
  splitDBwdLoadOf,
  splitDBwdSliceCount,
  splitDBwdSliceOf,
  valueTable16,
  type AttentionBwdArgs,
  type AttentionOperand,
  type FmhaBwdSm80SplitDPolicy,
  type ResolvedAttentionBwdArgs,
} from '@tilekit/fmha';

/** The model's results: dQ, dK, dV packed bhsd (the reference's default strides), fp32. */
export interface FfpaBwdModelResult {
  readonly dq: Float32Array;
  readonly dk: Float32Array;
  readonly dv: Float32Array;
}

/** The decomposition's knobs (the pipeline policy's; tiles are 64 × 64) and, for tests, a replaced slice map. */
export interface FfpaBwdModelShape extends Pick<FmhaBwdSm80SplitDPolicy, 'sliceWidth' | 'stages'> {
  /** First 64-column chunk of slice s (default the pipeline's: s · sliceWidth / 64). */
  readonly chunk0?: (slice: number) => number;
}

function element(op: AttentionOperand, at: number): number {
  return op.dtype === 'fp32' ? op.data[at]! : valueTable16(op.dtype)[op.data[at]!]!;
}

/**
 * Runs the kernel's loops on the CPU for the problem of `args` (any mode, GQA, mask of the
 * reference): per (batch, key head, blockIdx.x = key tile · slices + slice) the block's dK, dV
 * registers, then every ring step g in order — Q·Kᵀ chunks into S, dO·Vᵀ chunks into dP (after the
 * last: P, dS), column chunks into dV, dK and the dQ workspace.
 */
export function ffpaBwdSplitDModel(args: AttentionBwdArgs, shape: FfpaBwdModelShape): FfpaBwdModelResult {
  const a: ResolvedAttentionBwdArgs = resolveAttentionBwdArgs(args);
  const C = FMHA_BWD_SM80_SPLIT_D_CHUNK;
  const T = 64;
  const { hdimQ: d, hdimV: dv, scale } = a;
  if (d % C !== 0 || dv % C !== 0) throw new Error(`the model needs head dims that are multiples of ${C}`);
  const qkC = d / C;
  const vC = dv / C;
  const sC = shape.sliceWidth / C;
  const slices = splitDBwdSliceCount(d, dv, shape.sliceWidth);
  const chunk0 = shape.chunk0 ?? ((s: number) => splitDBwdSliceOf(s, d, dv, shape.sliceWidth).k[0] / C);
  const ratio = a.nheadQ / a.nheadK;
  const batches = a.groupMode ? 1 : a.batch;
  const dqStrides = packedAttentionStrides('bhsd', a.nheadQ, a.rowsQ, d);
  const dkStrides = packedAttentionStrides('bhsd', a.nheadK, a.rowsK, d);
  const dvStrides = packedAttentionStrides('bhsd', a.nheadK, a.rowsK, dv);
  const dqAcc = new Float64Array(batches * a.nheadQ * a.rowsQ * d);
  const dK = new Float32Array(batches * a.nheadK * a.rowsK * d);
  const dV = new Float32Array(batches * a.nheadK * a.rowsK * dv);
  const S = new Float64Array(T * T);
  const dP = new Float64Array(T * T);
  // Group mode: key slots (seqstartK) may be longer than the keys used (seqlenK).
  const slotsK = a.groupMode ? a.rowStartsK.map((s, b) => (b + 1 < a.batch ? a.rowStartsK[b + 1]! : a.rowsK) - s) : a.seqlensK;
  // One batch's operand rows decoded once ([head][row][col], rows past the sequence read 0 as the kernel's zero-filled copies).
  const gather = (op: AttentionOperand, starts: readonly number[], b: number, nhead: number, rows: number, dim: number): Float64Array => {
    const out = new Float64Array(nhead * rows * dim);
    for (let h = 0; h < nhead; h++)
      for (let r = 0; r < rows; r++) {
        const base = attentionRowOffset(a, op.strides, starts, b, h, r);
        for (let c = 0; c < dim; c++) out[(h * rows + r) * dim + c] = element(op, base + c);
      }
    return out;
  };
  for (let b = 0; b < a.batch; b++) {
    const sq = a.seqlensQ[b]!;
    const sk = a.seqlensK[b]!;
    const mask = makeGenericAttentionMask(a.mask, sq, sk);
    const [qB, dOB] = [gather(args.q, a.rowStartsQ, b, a.nheadQ, sq, d), gather(args.dO, a.rowStartsQ, b, a.nheadQ, sq, dv)];
    const [kB, vB] = [gather(args.k, a.rowStartsK, b, a.nheadK, sk, d), gather(args.v, a.rowStartsK, b, a.nheadK, sk, dv)];
    const read = (x: Float64Array, h: number, r: number, rows: number, dim: number, c: number): number =>
      r < rows ? x[(h * rows + r) * dim + c]! : 0;
    for (let hk = 0; hk < a.nheadK; hk++) {
      const keyTiles = Math.max(1, Math.ceil(slotsK[b]! / T));
      for (let x = 0; x < keyTiles * slices; x++) {
        const slice = x % slices;
        const n0 = Math.floor(x / slices) * T;
        if (n0 >= slotsK[b]!) continue;
        const k0 = chunk0(slice);
        const dKr = Array.from({ length: sC }, () => new Float64Array(T * C));
        const dVr = Array.from({ length: sC }, () => new Float64Array(T * C));
        const [qs, qe] = mask.getTileRangeAlongY(n0, T, T);
        const qTiles = Math.max(0, (qe - qs) / T);
        const steps = qkC + vC + sC;
        const K = (j: number, c: number) => read(kB, hk, n0 + j, sk, d, c);
        const V = (j: number, c: number) => read(vB, hk, n0 + j, sk, dv, c);
        for (let g = 0; g < qTiles * ratio * steps; g++) {
          const load = splitDBwdLoadOf(g, qkC, vC, sC, shape.stages);
          const head = hk * ratio + Math.floor(load.tile / qTiles);
          const m0 = qs + (load.tile % qTiles) * T;
          const Q = (i: number, c: number) => read(qB, head, m0 + i, sq, d, c);
          const dO = (i: number, c: number) => read(dOB, head, m0 + i, sq, dv, c);
          if (load.kind === 'qk' || load.kind === 'dov') {
            const [acc, A, B] = load.kind === 'qk' ? [S, Q, K] : [dP, dO, V];
            if (load.chunk === 0) acc.fill(0);
            for (let i = 0; i < T; i++)
              for (let j = 0; j < T; j++) {
                let s = 0;
                for (let c = load.chunk * C; c < (load.chunk + 1) * C; c++) s += A(i, c) * B(j, c);
                acc[i * T + j] = acc[i * T + j]! + s;
              }
            if (load.kind === 'dov' && load.chunk === vC - 1) {
              for (let i = 0; i < T; i++) {
                const row = m0 + i;
                const lse = row < sq ? args.lse[attentionLseIndex(a, b, head, row)]! : Infinity;
                const delta = row < sq ? rowDelta(a, args, b, head, row) : 0;
                for (let j = 0; j < T; j++) {
                  const p = mask.isMasked(row, n0 + j) || lse === -Infinity ? 0 : Math.exp(scale * S[i * T + j]! - lse);
                  S[i * T + j] = p;
                  dP[i * T + j] = p * (dP[i * T + j]! - delta);
                }
              }
            }
            continue;
          }
          const u = load.chunk;
          const kc = k0 + u;
          if (kc < vC)
            for (let j = 0; j < T; j++)
              for (let c = 0; c < C; c++) {
                let s = 0;
                for (let i = 0; i < T; i++) s += S[i * T + j]! * dO(i, kc * C + c);
                dVr[u]![j * C + c] = dVr[u]![j * C + c]! + s;
              }
          if (kc < qkC) {
            for (let j = 0; j < T; j++)
              for (let c = 0; c < C; c++) {
                let s = 0;
                for (let i = 0; i < T; i++) s += dP[i * T + j]! * Q(i, kc * C + c);
                dKr[u]![j * C + c] = dKr[u]![j * C + c]! + s;
              }
            for (let i = 0; i < T && m0 + i < sq; i++)
              for (let c = 0; c < C; c++) {
                let s = 0;
                for (let j = 0; j < T; j++) s += dP[i * T + j]! * K(j, kc * C + c);
                const o = attentionRowOffset(a, dqStrides, a.rowStartsQ, b, head, m0 + i) + kc * C + c;
                dqAcc[o] = dqAcc[o]! + s * scale;
              }
          }
        }
        for (let u = 0; u < sC; u++) {
          const kc = k0 + u;
          for (let j = 0; j < T && n0 + j < slotsK[b]!; j++) {
            if (kc < qkC)
              for (let c = 0; c < C; c++)
                dK[attentionRowOffset(a, dkStrides, a.rowStartsK, b, hk, n0 + j) + kc * C + c] = scale * dKr[u]![j * C + c]!;
            if (kc < vC)
              for (let c = 0; c < C; c++)
                dV[attentionRowOffset(a, dvStrides, a.rowStartsK, b, hk, n0 + j) + kc * C + c] = dVr[u]![j * C + c]!;
          }
        }
      }
    }
  }
  return { dq: Float32Array.from(dqAcc), dk: dK, dv: dV };
}

/** Delta = rowsum(dO∘O) of (b, h, row): what the dot_do_o kernel computes before dq_dk_dv. */
function rowDelta(a: ResolvedAttentionBwdArgs, args: AttentionBwdArgs, b: number, h: number, row: number): number {
  let s = 0;
  const oBase = attentionRowOffset(a, args.o.strides, a.rowStartsQ, b, h, row);
  const dBase = attentionRowOffset(a, args.dO.strides, a.rowStartsQ, b, h, row);
  for (let c = 0; c < a.hdimV; c++) s += element(args.o, oBase + c) * element(args.dO, dBase + c);
  return s;
}
