import { bitAnd, bitOr, cast, defineFunction, shl, shr, uint32, uint64, type FunctionDef, type Target } from '@tilekit/codegen';
import { WgmmaDescriptorError } from '../errors.ts';

/**
 * The swizzling modes of a wgmma shared-memory operand, in the order of their 2-bit code in bits
 * 62–63 of the matrix descriptor (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format"):
 * 0 = no swizzle (interleaved core matrices), 1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle.
 */
export const wgmmaSwizzleModes = ['none', '128B', '64B', '32B'] as const;
/** One of {@link wgmmaSwizzleModes}. */
export type WgmmaSwizzle = (typeof wgmmaSwizzleModes)[number];

/** The 2-bit swizzle code of bits 62–63. */
export function wgmmaSwizzleCode(swizzle: WgmmaSwizzle): number {
  const code = wgmmaSwizzleModes.indexOf(swizzle);
  if (code < 0) throw new WgmmaDescriptorError('swizzle', `must be one of ${wgmmaSwizzleModes.join(', ')}`, String(swizzle));
  return code;
}

/** The fields of a wgmma matrix descriptor, in bytes (as the program knows them, before encoding). */
export interface WgmmaDescriptorFields {
  /** Byte address of the matrix in the CTA's shared-memory window (`__cvta_generic_to_shared`). */
  readonly startAddress: number;
  /** Leading dimension byte offset (LBO): between core matrices adjacent in K (K-major, no swizzle). */
  readonly leadingByteOffset: number;
  /** Stride dimension byte offset (SBO): between 8-row core-matrix groups adjacent in M/N. */
  readonly strideByteOffset: number;
  /** Matrix base offset (bits 49–51): 0 when the swizzle pattern starts on its repeat boundary. */
  readonly baseOffset?: number;
  readonly swizzle: WgmmaSwizzle;
}

/** Bit positions of the descriptor fields (PTX ISA 9.7.15.5.1.2.2). */
export const wgmmaDescriptorBits = {
  startAddress: { lsb: 0, width: 14 },
  leadingByteOffset: { lsb: 16, width: 14 },
  strideByteOffset: { lsb: 32, width: 14 },
  baseOffset: { lsb: 49, width: 3 },
  swizzle: { lsb: 62, width: 2 },
} as const;

/** `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`: the ISA keeps bits 4–17 of a byte value. */
const ENCODE_MASK = 0x3ffff;

function checkByteField(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > ENCODE_MASK) {
    throw new WgmmaDescriptorError(
      field,
      `must be an integer byte value in [0, ${ENCODE_MASK}] (the encoding keeps bits 4–17)`,
      String(value),
    );
  }
  if (value % 16 !== 0) throw new WgmmaDescriptorError(field, 'must be 16-byte aligned (the encoding drops the 4 low bits)', String(value));
}

/**
 * Encode a wgmma matrix descriptor (PTX ISA 9.7.15.5.1.2.2): bits 0–13 start address >> 4,
 * 16–29 leading byte offset >> 4, 32–45 stride byte offset >> 4, 49–51 base offset, 62–63 the
 * swizzle code; the other bits are zero. Domain: byte fields 16-byte aligned in [0, 2^18), base
 * offset in [0, 8); anything else throws `WgmmaDescriptorError` (the hardware would silently drop
 * bits). Postcondition (property-tested): `decodeWgmmaDescriptor(encode(f))` gives `f` back, and
 * the emitted C++ encoder (`defineWgmmaDescriptorEncoder`) computes the same 64-bit value.
 */
export function encodeWgmmaDescriptor(fields: WgmmaDescriptorFields): bigint {
  checkByteField('startAddress', fields.startAddress);
  checkByteField('leadingByteOffset', fields.leadingByteOffset);
  checkByteField('strideByteOffset', fields.strideByteOffset);
  const base = fields.baseOffset ?? 0;
  if (!Number.isInteger(base) || base < 0 || base > 7)
    throw new WgmmaDescriptorError('baseOffset', 'must be an integer in [0, 7] (3 bits)', String(base));
  const code = wgmmaSwizzleCode(fields.swizzle);
  const b = wgmmaDescriptorBits;
  return (
    (BigInt(fields.startAddress >> 4) << BigInt(b.startAddress.lsb)) |
    (BigInt(fields.leadingByteOffset >> 4) << BigInt(b.leadingByteOffset.lsb)) |
    (BigInt(fields.strideByteOffset >> 4) << BigInt(b.strideByteOffset.lsb)) |
    (BigInt(base) << BigInt(b.baseOffset.lsb)) |
    (BigInt(code) << BigInt(b.swizzle.lsb))
  );
}

/**
 * Decode a 64-bit wgmma matrix descriptor back into byte fields. Throws when a reserved bit is set
 * (a value no encoder produced). Inverse of {@link encodeWgmmaDescriptor}.
 */
export function decodeWgmmaDescriptor(desc: bigint): Required<WgmmaDescriptorFields> {
  if (desc < 0n || desc >= 1n << 64n) throw new WgmmaDescriptorError('value', 'must be an unsigned 64-bit integer', String(desc));
  const field = (f: { lsb: number; width: number }): number => Number((desc >> BigInt(f.lsb)) & ((1n << BigInt(f.width)) - 1n));
  const b = wgmmaDescriptorBits;
  let used = 0n;
  for (const f of Object.values(b)) used |= ((1n << BigInt(f.width)) - 1n) << BigInt(f.lsb);
  if ((desc & ~used & ((1n << 64n) - 1n)) !== 0n)
    throw new WgmmaDescriptorError('value', 'reserved bits (14–15, 30–31, 46–48, 52–61) must be zero', `0x${desc.toString(16)}`);
  return {
    startAddress: field(b.startAddress) << 4,
    leadingByteOffset: field(b.leadingByteOffset) << 4,
    strideByteOffset: field(b.strideByteOffset) << 4,
    baseOffset: field(b.baseOffset),
    swizzle: wgmmaSwizzleModes[field(b.swizzle)]!,
  };
}

/** Name of the emitted encoder. */
export const WGMMA_DESCRIPTOR_ENCODER = 'tk_wgmma_desc_encode';

/**
 * The descriptor encoder as a codegen function for `target` (host for differential tests, sm_90a
 * in kernels): `unsigned long long tk_wgmma_desc_encode(unsigned int start_address, unsigned int
 * leading_byte_offset, unsigned int stride_byte_offset, unsigned int base_offset, unsigned int
 * swizzle)`, the same bit packing as {@link encodeWgmmaDescriptor} built from expression nodes
 * (no string). It applies the ISA's `(x & 0x3FFFF) >> 4` and masks base offset and swizzle to their
 * widths, so on the TS encoder's domain both agree (tested through g++).
 */
export function defineWgmmaDescriptorEncoder(target: Target): FunctionDef {
  return defineFunction(
    {
      name: WGMMA_DESCRIPTOR_ENCODER,
      returns: uint64,
      qualifiers: target.functionQualifiers('force'),
      params: { start_address: uint32, leading_byte_offset: uint32, stride_byte_offset: uint32, base_offset: uint32, swizzle: uint32 },
    },
    (b, p) => {
      const b64 = wgmmaDescriptorBits;
      const enc = (x: typeof p.start_address): ReturnType<typeof cast> => cast(shr(bitAnd(x, ENCODE_MASK), 4), uint64);
      const at = (x: ReturnType<typeof cast>, lsb: number): ReturnType<typeof cast> => (lsb === 0 ? x : shl(x, lsb));
      b.return(
        bitOr(
          bitOr(
            bitOr(at(enc(p.start_address), b64.startAddress.lsb), at(enc(p.leading_byte_offset), b64.leadingByteOffset.lsb)),
            at(enc(p.stride_byte_offset), b64.strideByteOffset.lsb),
          ),
          bitOr(at(cast(bitAnd(p.base_offset, 7), uint64), b64.baseOffset.lsb), at(cast(bitAnd(p.swizzle, 3), uint64), b64.swizzle.lsb)),
        ),
      );
    },
  );
}
