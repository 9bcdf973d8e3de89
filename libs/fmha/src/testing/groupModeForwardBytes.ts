// Buffer sizes of a checked group-mode attention forward (fmha-fwd and sparge's attention), for the
// specs that allocate Q, K, V, O and LSE themselves (the empty-rows specs, where a tensor may span 0 rows).

/** Row, head and batch strides of one tensor, in elements. */
export interface GroupModeStrides {
  readonly row: number;
  readonly head: number;
  readonly batch: number;
}

/** What `groupModeForwardBytes` reads of a checked forward problem (2-byte elements, fp32 LSE). */
export interface GroupModeForwardShape {
  readonly dtype: string;
  readonly nheadQ: number;
  readonly nheadK: number;
  readonly rowsQ: number;
  readonly rowsK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly qStrides: GroupModeStrides;
  readonly kStrides: GroupModeStrides;
  readonly vStrides: GroupModeStrides;
  readonly oStrides: GroupModeStrides;
}

/** Bytes of Q, K, V, O and LSE. */
export interface GroupModeForwardBytes {
  readonly q: number;
  readonly k: number;
  readonly v: number;
  readonly o: number;
  readonly lse: number;
}

/** Elements a strided tensor spans (0 without rows): group mode has one "batch". */
export function stridedSpan(s: GroupModeStrides, heads: number, rows: number, hdim: number): number {
  return rows === 0 ? 0 : (heads - 1) * s.head + (rows - 1) * s.row + hdim;
}

/** Bytes of Q, K, V, O (2-byte elements) and LSE (fp32) of a checked group-mode forward problem; 0 for 0 rows. */
export function groupModeForwardBytes(p: GroupModeForwardShape): GroupModeForwardBytes {
  const e = 2;
  return {
    q: stridedSpan(p.qStrides, p.nheadQ, p.rowsQ, p.hdimQ) * e,
    k: stridedSpan(p.kStrides, p.nheadK, p.rowsK, p.hdimQ) * e,
    v: stridedSpan(p.vStrides, p.nheadK, p.rowsK, p.hdimV) * e,
    o: stridedSpan(p.oStrides, p.nheadQ, p.rowsQ, p.hdimV) * e,
    lse: p.nheadQ * p.rowsQ * 4,
  };
}
