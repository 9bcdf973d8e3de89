/** Each head's rows × dim block of `x` (heads × rows × dim) transposed to dim × rows (e.g. V by columns for P·V). */
export function transposeHeads(x: Float64Array, heads: number, rows: number, dim: number): Float64Array {
  const t = new Float64Array(x.length);
  for (let h = 0; h < heads; h++) {
    const base = h * rows * dim;
    for (let r = 0; r < rows; r++) for (let c = 0; c < dim; c++) t[base + c * rows + r] = x[base + r * dim + c]!;
  }
  return t;
}
