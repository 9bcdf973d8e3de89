import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWholeFile } from './readWholeFile.ts';

describe('readWholeFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-read-whole-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('returns every byte of a file, empty files included', () => {
    const bytes = Uint8Array.from({ length: 100_003 }, (_, i) => (i * 131) & 0xff);
    writeFileSync(join(dir, 'a.bin'), bytes);
    writeFileSync(join(dir, 'empty.bin'), new Uint8Array(0));
    expect(new Uint8Array(readWholeFile(join(dir, 'a.bin')))).toEqual(bytes);
    expect(readWholeFile(join(dir, 'empty.bin')).byteLength).toBe(0);
  });

  it('names the file it cannot open', () => {
    expect(() => readWholeFile(join(dir, 'missing.bin'))).toThrow(/missing\.bin/);
  });
});
