// One thread's cp.async copies of part of a 576-wide bf16 row into 128B-swizzled slabs (the layout
// TMA's 128-byte swizzle gives and wgmma reads): used for the resident Q and for gathered key rows.
import {
  add,
  bitAnd,
  bitXor,
  cast,
  cpAsync,
  int32,
  int64,
  mul,
  pointer,
  shl,
  shr,
  uint8,
  type BlockBuilder,
  type Expr,
  type ExprLike,
  type Target,
} from '@tilekit/codegen';

/** 16-byte chunks of a 576-wide bf16 row: 8 per slab. */
export const DSA_SPARSE_MLA_ROW_CHUNKS = 72;

/** What {@link emitDsaSwizzledRowCopy} copies. */
export interface DsaSwizzledRowCopy {
  /** `uint8*` of slab 0 (1024-aligned; slab c at c · slabBytes). */
  readonly slabs: Expr;
  /** Bytes of one slab: its rows × 128. */
  readonly slabBytes: number;
  /** `int` row in the slabs (0 … 63). */
  readonly row: Expr;
  /** `const uint8*` of the row's first byte in global memory (16-byte aligned; unread when srcBytes is 0). */
  readonly source: Expr;
  /** The chunks first + k · stride, k < count, of the row's 72 (`first` an `int`; count and stride compile-time, stride default 1). */
  readonly first: ExprLike;
  readonly count: number;
  readonly stride?: number;
  /** Bytes each copy reads (16, or 0 to zero-fill the chunk without reading). */
  readonly srcBytes: ExprLike;
}

/**
 * Emits the copies: chunk j (16 bytes, columns [8j, 8j + 8)) lands in slab j / 8 (at (j / 8) · slabBytes) at row · 128 +
 * ((j mod 8) XOR (row mod 8)) · 16, one `cp.async.cg` each (not committed: the caller commits and
 * waits, then fences the async proxy before wgmma reads the slabs).
 */
export function emitDsaSwizzledRowCopy(b: BlockBuilder, target: Target, c: DsaSwizzledRowCopy): void {
  const rowBytes = b.let('row_bytes', int32, mul(c.row, 128));
  const phase = b.let('row_phase', int32, bitAnd(c.row, 7));
  b.forRange({ name: 'k', to: c.count, unroll: true }, (l, k) => {
    const j = l.let('chunk', int32, add(c.first, mul(k, c.stride ?? 1)));
    const slab = mul(shr(j, 3), c.slabBytes);
    const at = add(add(slab, rowBytes), shl(bitXor(bitAnd(j, 7), phase), 4));
    l.expr(
      cpAsync(target, {
        dst: add(c.slabs, at),
        src: add(c.source, cast(mul(cast(j, int64), 16), int64)),
        bytes: 16,
        srcBytes: c.srcBytes,
      }),
    );
  });
}

/** `const uint8*` to row `row` of a bf16 matrix at `base` whose rows are `stride` elements apart. */
export function dsaBf16RowBytes(b: BlockBuilder, name: string, base: Expr, row: Expr, stride: Expr): Expr {
  return b.let(
    name,
    pointer(uint8, { const: true }),
    add(cast(base, pointer(uint8, { const: true })), mul(mul(cast(row, int64), cast(stride, int64)), 2)),
  );
}
