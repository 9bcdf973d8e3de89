// GPU tests of the fp8 dequantizing intrinsics (node:test; run on the GPU machine): for every e4m3 byte in every byte
// position of a word and power-of-two scales 2^-13 … 2^20, dequantFp8x2ToBf16x2 (the cvt path) and
// dequantE4m3x2Pow2ToBf16x2 (the bit-placement + bf16x2 multiply path) must give bf16(e4m3 · scale) EXACTLY (bit
// patterns, subnormal e4m3 included; the NaN bytes 0x7f / 0xff are not compared). Skipped (loudly) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decode, encode } from '@tilekit/numeric';
import { gpu } from '@tilekit/runtime/testing';
import { float32, int32, uint32 } from '../cType.ts';
import { sm90a } from '../cudaTarget.ts';
import { kernelParam } from '../kernel/kernelParam.ts';
import { KernelSignature } from '../kernel/kernelSignature.ts';
import { add, bitAnd, cast, index, lt, mul, shr } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { dequantE4m3x2Pow2ToBf16x2, dequantFp8x2ToBf16x2, e4m3Pow2ScaleFactor } from './dequantFp8x2.ts';

const t = sm90a;
const WORDS = 256;
const SCALES = Array.from({ length: 34 }, (_, i) => 2 ** (i - 13));
/** Word i holds bytes i, i + 37, i + 101, i + 199 (mod 256): every byte value in every position. */
const OFFSETS = [0, 37, 101, 199];

const sig = new KernelSignature('tk_test_dequant_fp8', t, {
  words: kernelParam.pointer(uint32, { const: true }),
  scales: kernelParam.pointer(float32, { const: true }),
  out: kernelParam.pointer(uint32),
  n: kernelParam.i32(),
});

/** Thread (word i, scale j) writes [cvt bytes 0–1, cvt bytes 2–3, pow2 bytes 0–1, pow2 bytes 2–3]. */
function source(): string {
  const src = new SourceBuilder({ dialect: t, header: 'tilekit fp8 dequant GPU tests' });
  sig.defineEntry(src, { launchBounds: { maxThreads: 256 } }, (b, a) => {
    const id = b.let('id', int32, add(mul(cast(t.blockIdx('x'), int32), 256), cast(t.threadIdx('x'), int32)));
    b.if(lt(id, a.n), (x) => {
      const w = x.let('w', uint32, index(a.words, bitAnd(id, WORDS - 1)));
      const s = x.let('s', float32, index(a.scales, shr(id, 8)));
      const f = x.let('f', uint32, e4m3Pow2ScaleFactor(s));
      const got = [
        dequantFp8x2ToBf16x2(t, 'fp8e4m3fn', bitAnd(w, 0xffff), s),
        dequantFp8x2ToBf16x2(t, 'fp8e4m3fn', shr(w, 16), s),
        dequantE4m3x2Pow2ToBf16x2(t, w, 'low', f),
        dequantE4m3x2Pow2ToBf16x2(t, w, 'high', f),
      ];
      got.forEach((g, k) => x.assign(index(a.out, add(mul(id, 4), k)), g));
    });
  });
  return src.render();
}

test(
  'codegen/intrinsics/gpu: both fp8 dequant paths give bf16(e4m3 · 2^k) bit for bit for every byte and k in [−13, 20]',
  gpu.options,
  async () => {
    const device = gpu.device();
    const words = Uint32Array.from({ length: WORDS }, (_, i) => OFFSETS.reduce((w, o, p) => w | (((i + o) & 255) << (8 * p)), 0) >>> 0);
    const n = WORDS * SCALES.length;
    const dw = device.upload(words);
    const ds = device.upload(Float32Array.from(SCALES));
    const dout = device.alloc(n * 16).fill(0xa5);
    try {
      const { module } = await gpu.module(source(), sig.name);
      module.getKernel(sig.name).launch({ grid: Math.ceil(n / 256), block: 256 }, sig.pack({ words: dw, scales: ds, out: dout, n }));
      const got = dout.copyToHost(new Uint32Array(n * 4));
      let compared = 0;
      for (let j = 0; j < SCALES.length; j++) {
        for (let i = 0; i < WORDS; i++) {
          const id = j * WORDS + i;
          for (let p = 0; p < 4; p++) {
            const byte = (i + OFFSETS[p]!) & 255;
            if ((byte & 0x7f) === 0x7f) continue;
            const want = encode('bf16', decode('fp8e4m3fn', byte) * SCALES[j]!);
            for (const [path, word] of [
              ['cvt', got[id * 4 + (p >> 1)]!],
              ['pow2', got[id * 4 + 2 + (p >> 1)]!],
            ] as const) {
              const bits = (word >>> (16 * (p & 1))) & 0xffff;
              assert.equal(
                bits,
                want,
                `${path}: byte 0x${byte.toString(16)} × 2^${j - 13} gave 0x${bits.toString(16)}, want 0x${want.toString(16)}`,
              );
              compared++;
            }
          }
        }
      }
      console.log(`  ${compared} dequantized values compared bit for bit`);
    } finally {
      dw.dispose();
      ds.dispose();
      dout.dispose();
    }
  },
);
