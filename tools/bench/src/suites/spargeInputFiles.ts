// Writes Sparge's inputs as the case's tensor files (referenceProtocol: raw little-endian, C-contiguous):
// q, k, v fp16 bhsd (b, h, s, d), head by head from the one slice (spargeInputs.ts), so the whole
// tensor never sits in host memory.
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { InputSource, TensorFile } from '../referenceProtocol.ts';
import { SPARGE_INPUT_SEED, spargeHeadBits, spargeInputsGenerator, type SpargeInputShape, type SpargeSlice } from './spargeInputs.ts';

/** The input names of the `sparge` reference op, in its order. */
export const SPARGE_INPUT_NAMES = ['q', 'k', 'v'] as const;

function writeTensor(path: string, slice: Uint16Array, c: SpargeInputShape): void {
  const fd = openSync(path, 'w');
  try {
    for (let bh = 0; bh < c.b * c.h; bh++) {
      const head = spargeHeadBits(slice, bh, c);
      writeSync(fd, new Uint8Array(head.buffer, head.byteOffset, head.byteLength));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `<dir>/q.bin`, `k.bin`, `v.bin` for a shape whose s and d are the slice's and returns the
 * input source the harness hands the reference server.
 * @throws Error when the slice was drawn for another s or d.
 */
export function writeSpargeInputs(c: SpargeInputShape, slice: SpargeSlice, dir: string): InputSource & { readonly source: 'files' } {
  if (slice.s !== c.s || slice.d !== c.d)
    throw new Error(`sparge inputs: the slice is ${slice.s}x${slice.d}, the case needs ${c.s}x${c.d}`);
  const tensors: Record<string, TensorFile> = {};
  for (const name of SPARGE_INPUT_NAMES) {
    const file = `${name}.bin`;
    writeTensor(join(dir, file), slice[name], c);
    tensors[name] = { file, dtype: 'fp16', shape: [c.b, c.h, c.s, c.d] };
  }
  return { source: 'files', generator: spargeInputsGenerator(c), seed: SPARGE_INPUT_SEED, tensors };
}
