import { defineFloatFormat } from './floatFormat.ts';

/**
 * AMD (gfx940/942, MI300) fp8 E4M3 "fnuz": bias 8, no infinities, no negative zero: 0x80 is the
 * single NaN; max 240 (0x7F); −0 converts to 0x00.
 */
export const float8e4m3fnuzFormat = defineFloatFormat({
  name: 'fp8e4m3fnuz',
  exponentBits: 4,
  mantissaBits: 3,
  exponentBias: 8,
  specials: 'fnuz',
  canonicalNaN: 0x80,
});

/**
 * AMD fp8 E5M2 "fnuz": bias 16, no infinities, no negative zero: 0x80 is the single NaN;
 * max 57344 (0x7F); −0 converts to 0x00.
 */
export const float8e5m2fnuzFormat = defineFloatFormat({
  name: 'fp8e5m2fnuz',
  exponentBits: 5,
  mantissaBits: 2,
  exponentBias: 16,
  specials: 'fnuz',
  canonicalNaN: 0x80,
});
