// Reading one of a case's input files, checked against what the suite expects of it: the server
// writes the inputs (REFERENCE_OPS.md), so a mismatch is a contract break, reported by name.
import type { CaseContext } from '../benchSuite.ts';
import type { TensorDtype } from '../referenceProtocol.ts';

/** Bytes per element of each tensor-file dtype. */
export const TENSOR_DTYPE_BYTES: Readonly<Record<TensorDtype, number>> = { fp16: 2, bf16: 2, fp32: 4, int8: 1, uint8: 1, int32: 4 };

/**
 * The raw bytes of input `name` (packed, C-contiguous), after checking that its descriptor has
 * `dtype` and `shape` and that the file holds exactly that many bytes.
 */
export function readCaseInput(ctx: CaseContext, name: string, dtype: TensorDtype, shape: readonly number[]): Uint8Array {
  const file = ctx.inputs[name];
  if (file === undefined) throw new Error(`input ${name} is missing (the case has ${Object.keys(ctx.inputs).join(', ') || 'none'})`);
  if (file.dtype !== dtype || file.shape.join('x') !== shape.join('x')) {
    throw new Error(`input ${name} is ${file.dtype} [${file.shape.join(', ')}], expected ${dtype} [${shape.join(', ')}]`);
  }
  const bytes = ctx.readInput(name);
  const want = shape.reduce((n, d) => n * d, TENSOR_DTYPE_BYTES[dtype]);
  if (bytes.byteLength !== want) throw new Error(`input ${name} has ${bytes.byteLength} bytes, expected ${want}`);
  return bytes;
}
