import { defineFloatFormat } from './floatFormat.ts';

/**
 * OCP 8-bit floating point (OFP8) E4M3, "fn" in LLVM/PyTorch naming: bias 7, no infinities, the only
 * NaNs are S.1111.111 (0x7F, 0xFF), so the top binade reaches max 448 = S.1111.110 (0x7E);
 * ±0 exist. Canonical NaN 0x7F (as CUDA and PyTorch produce).
 */
export const float8e4m3fnFormat = defineFloatFormat({
  name: 'fp8e4m3fn',
  exponentBits: 4,
  mantissaBits: 3,
  exponentBias: 7,
  specials: 'fn',
  canonicalNaN: 0x7f,
});

/**
 * OCP 8-bit floating point (OFP8) E5M2: IEEE-like, bias 15, ±Inf = S.11111.00 (0x7C, 0xFC), NaNs
 * S.11111.{01,10,11}, max 57344 (0x7B). Canonical NaN 0x7F (what PyTorch and CUDA's float path give).
 */
export const float8e5m2Format = defineFloatFormat({
  name: 'fp8e5m2',
  exponentBits: 5,
  mantissaBits: 2,
  exponentBias: 15,
  specials: 'ieee',
  canonicalNaN: 0x7f,
});
