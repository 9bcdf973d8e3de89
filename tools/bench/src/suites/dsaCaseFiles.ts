// Case files too big for one read or write (node reads at most 2 GiB at once): dsa-indexer's paged cache
// at batch 128 × 128K is 2.2 GB and its prefill logits at 4096 × 128K are 2 GiB. They go through a chunk
// buffer, each chunk handed to a callback (a device upload or a device read-back), and single pages are
// read at their offset.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseContext } from '../benchSuite.ts';
import type { TensorDtype, TensorFile } from '../referenceProtocol.ts';
import { TENSOR_DTYPE_BYTES } from './readCaseInput.ts';

/** Bytes a chunk of a big file takes (the host buffer reused for every chunk). */
export const CASE_FILE_CHUNK_BYTES = 64 << 20;

/** The path of input `name` after checking its descriptor (dtype, shape) and the file's size; returns its bytes too. */
export function caseInputPath(
  ctx: CaseContext,
  name: string,
  dtype: TensorDtype,
  shape: readonly number[],
): { readonly path: string; readonly bytes: number } {
  const file = ctx.inputs[name];
  if (file === undefined) throw new Error(`input ${name} is missing (the case has ${Object.keys(ctx.inputs).join(', ') || 'none'})`);
  if (file.dtype !== dtype || file.shape.join('x') !== shape.join('x'))
    throw new Error(`input ${name} is ${file.dtype} [${file.shape.join(', ')}], expected ${dtype} [${shape.join(', ')}]`);
  const path = join(ctx.dir, file.file);
  const bytes = shape.reduce((n, d) => n * d, TENSOR_DTYPE_BYTES[dtype]);
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size !== bytes) throw new Error(`input ${name} has ${size} bytes, expected ${bytes}`);
  } finally {
    closeSync(fd);
  }
  return { path, bytes };
}

/** Reads `bytes` bytes of `path` in chunks of at most `chunkBytes`, handing each to `visit` with its offset (the buffer is reused). */
export function readFileChunks(
  path: string,
  bytes: number,
  visit: (chunk: Uint8Array, offset: number) => void,
  chunkBytes = CASE_FILE_CHUNK_BYTES,
): void {
  const buffer = new Uint8Array(Math.max(1, Math.min(chunkBytes, bytes)));
  const fd = openSync(path, 'r');
  try {
    for (let offset = 0; offset < bytes;) {
      const want = Math.min(buffer.length, bytes - offset);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, buffer, got, want - got, offset + got);
        if (n === 0) throw new Error(`${path} ends at ${offset + got} bytes, expected ${bytes}`);
        got += n;
      }
      visit(buffer.subarray(0, want), offset);
      offset += want;
    }
  } finally {
    closeSync(fd);
  }
}

/** `length` bytes of `path` from `offset` (a page of the cache). */
export function readFileRange(path: string, offset: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const fd = openSync(path, 'r');
  try {
    for (let got = 0; got < length;) {
      const n = readSync(fd, out, got, length - got, offset + got);
      if (n === 0) throw new Error(`${path} ends before ${offset + length} bytes`);
      got += n;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/**
 * Writes a `bytes`-byte file in chunks of at most `chunkBytes`: `fill` writes each chunk (e.g. from the device)
 * before it goes to disk, and may look at it. Returns nothing; the caller names the file.
 */
export function writeFileChunks(
  path: string,
  bytes: number,
  fill: (chunk: Uint8Array, offset: number) => void,
  chunkBytes = CASE_FILE_CHUNK_BYTES,
): void {
  const buffer = new Uint8Array(Math.max(1, Math.min(chunkBytes, bytes)));
  const fd = openSync(path, 'w');
  try {
    for (let offset = 0; offset < bytes;) {
      const chunk = buffer.subarray(0, Math.min(buffer.length, bytes - offset));
      fill(chunk, offset);
      for (let done = 0; done < chunk.length;) done += writeSync(fd, chunk, done, chunk.length - done);
      offset += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
}

/** Our output `name` written chunk by chunk into the case directory as `ours.<name>.bin` (CaseContext.writeTensor's name); its descriptor. */
export function writeOurTensorChunks(
  ctx: CaseContext,
  name: string,
  dtype: TensorDtype,
  shape: readonly number[],
  fill: (chunk: Uint8Array, offset: number) => void,
  chunkBytes = CASE_FILE_CHUNK_BYTES,
): TensorFile {
  const file = `ours.${name}.bin`;
  writeFileChunks(
    join(ctx.dir, file),
    shape.reduce((n, d) => n * d, TENSOR_DTYPE_BYTES[dtype]),
    fill,
    chunkBytes,
  );
  return { file, dtype, shape: [...shape] };
}
