// Reading a whole file into memory, including files above the 2 GiB that fs.readFileSync refuses (a decode step's
// FP8 MLA cache at b 32 and 128K context is 2.75 GB): one buffer of the file's size, filled in 1 GiB reads.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const CHUNK = 1 << 30;

/** The bytes of the file at `path`. */
export function readWholeFile(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, out, at, Math.min(CHUNK, size - at), at);
      if (n === 0) throw new Error(`${path}: ended after ${at} of ${size} bytes`);
      at += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}
