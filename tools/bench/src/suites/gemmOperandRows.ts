// The GEMM operands as rows: the tensor files hold A, B and C packed (REFERENCE_OPS.md's stored
// shapes, C-contiguous), while ours reads and writes them at its leading dimensions lda, ldb, ldc
// (the ragged case pads K rows to a 16-byte pitch for TMA). These convert between the two.
import { gemmOperandStorage, type CheckedGemmProblem } from '@tilekit/kernel-gemm';
import { ArgumentError } from '@tilekit/numeric';

/** A stored matrix: `rows` rows of `cols` elements, each row starting `pitch` (≥ cols) elements after the last. */
export interface PitchedRows {
  readonly rows: number;
  readonly cols: number;
  readonly pitch: number;
}

/** The stored A, B and C of a (batch 1) problem: shapes as REFERENCE_OPS.md's gemm files, pitches lda, ldb, ldc. */
export function gemmOperandRows(p: CheckedGemmProblem): { readonly a: PitchedRows; readonly b: PitchedRows; readonly c: PitchedRows } {
  if (p.batch !== 1) throw new ArgumentError('problem.batch', 'must be 1 (the gemm reference op has no batch)', p.batch);
  const storage = gemmOperandStorage(p.layout);
  return {
    a: storage.a === 'row' ? { rows: p.m, cols: p.k, pitch: p.lda } : { rows: p.k, cols: p.m, pitch: p.lda },
    b: storage.b === 'col' ? { rows: p.n, cols: p.k, pitch: p.ldb } : { rows: p.k, cols: p.n, pitch: p.ldb },
    c: { rows: p.m, cols: p.n, pitch: p.ldc },
  };
}

/** The stored shape [rows, cols] of a matrix (its tensor file's shape). */
export function packedShape(r: PitchedRows): [number, number] {
  return [r.rows, r.cols];
}

function checkRows(r: PitchedRows): void {
  for (const key of ['rows', 'cols', 'pitch'] as const) {
    if (!Number.isSafeInteger(r[key]) || r[key] < 0) throw new ArgumentError(`rows.${key}`, 'must be a non-negative integer', r[key]);
  }
  if (r.pitch < r.cols) throw new ArgumentError('rows.pitch', `must be at least cols = ${r.cols}`, r.pitch);
}

/**
 * The packed rows of `packed` (rows·cols elements of `elementBytes`) laid out `pitch` apart in a
 * new zero-filled buffer of rows·pitch elements; `packed` itself when pitch = cols.
 */
export function padRows(packed: Uint8Array, r: PitchedRows, elementBytes: number): Uint8Array {
  checkRows(r);
  const rowBytes = r.cols * elementBytes;
  if (packed.byteLength !== r.rows * rowBytes)
    throw new ArgumentError('packed', `must hold ${r.rows}×${r.cols} elements of ${elementBytes} bytes`, packed.byteLength);
  if (r.pitch === r.cols) return packed;
  const pitchBytes = r.pitch * elementBytes;
  const out = new Uint8Array(r.rows * pitchBytes);
  for (let i = 0; i < r.rows; i++) out.set(packed.subarray(i * rowBytes, (i + 1) * rowBytes), i * pitchBytes);
  return out;
}

/**
 * The rows·cols elements of `pitched` (rows `pitch` elements apart), packed in a new buffer; a view
 * of `pitched` when pitch = cols. The inverse of {@link padRows}.
 */
export function unpadRows(pitched: Uint8Array, r: PitchedRows, elementBytes: number): Uint8Array {
  checkRows(r);
  const rowBytes = r.cols * elementBytes;
  const pitchBytes = r.pitch * elementBytes;
  const extent = r.rows === 0 ? 0 : (r.rows - 1) * pitchBytes + rowBytes;
  if (pitched.byteLength < extent)
    throw new ArgumentError(
      'pitched',
      `must hold ${r.rows} rows of ${r.cols} elements ${r.pitch} apart (${extent} bytes)`,
      pitched.byteLength,
    );
  if (r.pitch === r.cols) return pitched.subarray(0, r.rows * rowBytes);
  const out = new Uint8Array(r.rows * rowBytes);
  for (let i = 0; i < r.rows; i++) out.set(pitched.subarray(i * pitchBytes, i * pitchBytes + rowBytes), i * rowBytes);
  return out;
}
