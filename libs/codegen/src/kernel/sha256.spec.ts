import { createHash } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './sha256.ts';

const reference = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

describe('sha256Hex', () => {
  it('matches the FIPS 180-4 examples', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('matches node:crypto at every padding boundary (0..200 bytes)', () => {
    for (let n = 0; n <= 200; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
      expect(sha256Hex(bytes), `length ${n}`).toBe(reference(bytes));
    }
  });

  test.prop([fc.uint8Array({ maxLength: 600 })])('equals node:crypto on random bytes', (bytes) => {
    expect(sha256Hex(bytes)).toBe(reference(bytes));
  });

  test.prop([fc.string({ unit: 'grapheme', maxLength: 100 })])('hashes strings as UTF-8', (s) => {
    expect(sha256Hex(s)).toBe(reference(Buffer.from(s, 'utf8')));
  });
});
