import { ArgumentError } from '@tilekit/numeric';
import {
  resolveAttentionFwdArgs,
  type AttentionFwdArgs,
  type AttentionOperand,
  type ResolvedAttentionFwdArgs,
} from './attentionFwdArgs.ts';
import { attentionTensorSpan, packedAttentionStrides, type AttentionTensorStrides } from './attentionTensorLayout.ts';

/**
 * What the backward reference differentiates: the forward's problem (shapes, Q/K/V, scale, mask,
 * batch or group mode, GQA — as `AttentionFwdArgs`, without its output strides) plus the forward's
 * outputs O (an operand in its own strides) and LSE (natural log, in the layout of
 * `attentionLseIndex`, as `referenceAttentionFwd` produces it), and the incoming gradient dO
 * (nheadQ heads, hdimV, in its own strides). dQ/dK/dV strides default to packed bhsd (dK/dV with
 * nheadK heads over all key rows of the tensors).
 */
export interface AttentionBwdArgs extends Omit<AttentionFwdArgs, 'oStrides'> {
  readonly o: AttentionOperand;
  readonly dO: AttentionOperand;
  readonly lse: Float32Array | Float64Array;
  readonly dqStrides?: AttentionTensorStrides;
  readonly dkStrides?: AttentionTensorStrides;
  readonly dvStrides?: AttentionTensorStrides;
}

/** The backward arguments resolved: the forward's resolution plus the key rows and output strides. */
export interface ResolvedAttentionBwdArgs extends ResolvedAttentionFwdArgs {
  /** Rows of K/V per head in the tensors: seqlenK (batch mode) or seqstartK[batch] (group mode). */
  readonly rowsK: number;
  readonly dqStrides: AttentionTensorStrides;
  readonly dkStrides: AttentionTensorStrides;
  readonly dvStrides: AttentionTensorStrides;
  readonly dqElements: number;
  readonly dkElements: number;
  readonly dvElements: number;
  /** Entries of LSE and D: nheadQ·rowsQ·(group ? 1 : batch). */
  readonly lseElements: number;
}

function checkOperand(name: string, op: AttentionOperand, batches: number, nhead: number, rows: number, hdim: number): void {
  if (typeof op !== 'object' || op === null) throw new ArgumentError(name, 'must be an operand { dtype, data, strides }', op);
  const want = op.dtype === 'fp32' ? Float32Array : op.dtype === 'fp16' || op.dtype === 'bf16' ? Uint16Array : undefined;
  if (want === undefined) throw new ArgumentError(`${name}.dtype`, 'must be fp16, bf16 or fp32', op.dtype);
  if (!(op.data instanceof want))
    throw new ArgumentError(`${name}.data`, `must be a ${want.name} for ${op.dtype}`, op.data?.constructor?.name);
  checkStrides(`${name}.strides`, op.strides, hdim);
  const span = attentionTensorSpan(op.strides, batches, nhead, rows, hdim);
  if (op.data.length < span)
    throw new ArgumentError(`${name}.data`, `must hold at least ${span} elements (its strides reach that far)`, op.data.length);
}

function checkStrides(where: string, s: AttentionTensorStrides, hdim: number): void {
  if (typeof s !== 'object' || s === null) throw new ArgumentError(where, 'must be { batch, head, row }', s);
  for (const key of ['batch', 'head', 'row'] as const) {
    if (!Number.isSafeInteger(s[key]) || s[key] < 0) throw new ArgumentError(`${where}.${key}`, 'must be an integer ≥ 0', s[key]);
  }
  if (s.row < hdim && s.head < hdim)
    throw new ArgumentError(where, `row or head stride must be at least hdim = ${hdim} (the head dim is contiguous)`, s);
}

/**
 * Checks the backward reference's arguments (the forward's rules of `resolveAttentionFwdArgs`,
 * then O and dO as nheadQ × hdimV operands covering the query rows, LSE long enough, the output
 * strides well formed) and resolves them.
 * @throws ArgumentError naming the argument and the rule.
 */
export function resolveAttentionBwdArgs(args: AttentionBwdArgs): ResolvedAttentionBwdArgs {
  if (typeof args !== 'object' || args === null) throw new ArgumentError('args', 'must be an object', args);
  if (typeof args.o !== 'object' || args.o === null) throw new ArgumentError('o', 'must be an operand { dtype, data, strides }', args.o);
  const a = resolveAttentionFwdArgs({ ...args, oStrides: args.o.strides });
  const batches = a.groupMode ? 1 : a.batch;
  const rowsK = a.groupMode ? args.seqstartK![a.batch]! : (a.seqlensK[0] ?? 0);
  checkOperand('o', args.o, batches, a.nheadQ, a.rowsQ, a.hdimV);
  checkOperand('dO', args.dO, batches, a.nheadQ, a.rowsQ, a.hdimV);
  const lseElements = a.nheadQ * a.rowsQ * batches;
  if (!(args.lse instanceof Float32Array || args.lse instanceof Float64Array))
    throw new ArgumentError('lse', 'must be a Float32Array or Float64Array', args.lse);
  if (args.lse.length < lseElements)
    throw new ArgumentError('lse', `must hold nheadQ·rows·batches = ${lseElements} values`, args.lse.length);
  const dqStrides = args.dqStrides ?? packedAttentionStrides('bhsd', a.nheadQ, a.rowsQ, a.hdimQ);
  const dkStrides = args.dkStrides ?? packedAttentionStrides('bhsd', a.nheadK, rowsK, a.hdimQ);
  const dvStrides = args.dvStrides ?? packedAttentionStrides('bhsd', a.nheadK, rowsK, a.hdimV);
  checkStrides('dqStrides', dqStrides, a.hdimQ);
  checkStrides('dkStrides', dkStrides, a.hdimQ);
  checkStrides('dvStrides', dvStrides, a.hdimV);
  return Object.freeze({
    ...a,
    rowsK,
    dqStrides,
    dkStrides,
    dvStrides,
    dqElements: attentionTensorSpan(dqStrides, batches, a.nheadQ, a.rowsQ, a.hdimQ),
    dkElements: attentionTensorSpan(dkStrides, batches, a.nheadK, rowsK, a.hdimQ),
    dvElements: attentionTensorSpan(dvStrides, batches, a.nheadK, rowsK, a.hdimV),
    lseElements,
  });
}
