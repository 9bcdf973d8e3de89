// A cubin is an ELF64 file; for every kernel `k` it has a section `.nv.info.k` of attribute
// records, each starting on a 4-byte boundary: a format byte, an attribute byte, then two bytes
// (a value for formats 0x01–0x03; for 0x04, "sized", a little-endian u16 length of the payload
// that follows). Each
// parameter has one EIATTR_KPARAM_INFO record (attribute 0x17, 12 bytes): u32 index, u16
// ordinal, u16 offset, u32 flags whose bits 18–31 hold the size in bytes (what the driver's
// cuFuncGetParamInfo reports at run time). The runtime reads launch layouts from here, so it never
// asks the driver about an index past the last parameter (an API error under compute-sanitizer);
// the argument-layout test compares `argumentLayout` with it on nvcc's cubins.

/** One kernel parameter in the parameter block: byte offset and size. */
export interface CubinParam {
  readonly offset: number;
  readonly size: number;
}

const EIATTR_KPARAM_INFO = 0x17;
const FORMAT_SIZED = 0x04;
const FORMAT_HALF = 0x03;
const FORMAT_BYTE = 0x02;
const FORMAT_NONE = 0x01;

/** One section of an ELF image: name, file offset and size in bytes. */
export interface ElfSection {
  readonly name: string;
  readonly offset: number;
  readonly size: number;
}

/** The section table of a little-endian ELF64 image, or undefined when it is not one (or is cut short). */
export function elfSections(image: Uint8Array): ElfSection[] | undefined {
  const isElf64Le =
    image.length >= 64 &&
    image[0] === 0x7f &&
    image[1] === 0x45 &&
    image[2] === 0x4c &&
    image[3] === 0x46 &&
    image[4] === 2 &&
    image[5] === 1;
  if (!isElf64Le) return undefined;
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength);
  const shoff = Number(view.getBigUint64(0x28, true));
  const shentsize = view.getUint16(0x3a, true);
  const shnum = view.getUint16(0x3c, true);
  const shstrndx = view.getUint16(0x3e, true);
  if (shentsize < 64 || shoff + shnum * shentsize > image.length || shstrndx >= shnum) return undefined;
  const raw = Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * shentsize;
    return {
      nameAt: view.getUint32(at, true),
      offset: Number(view.getBigUint64(at + 24, true)),
      size: Number(view.getBigUint64(at + 32, true)),
    };
  });
  const names = raw[shstrndx]!;
  if (names.offset + names.size > image.length) return undefined;
  return raw.map((s) => ({ name: cString(image, names.offset + s.nameAt, names.offset + names.size), offset: s.offset, size: s.size }));
}

function cString(image: Uint8Array, from: number, end: number): string {
  let to = from;
  while (to < end && image[to] !== 0) to++;
  return new TextDecoder().decode(image.subarray(from, to));
}

/** The EIATTR_KPARAM_INFO records of one `.nv.info.<kernel>` section: [ordinal, param]. */
function kparamRecords(image: Uint8Array, section: ElfSection): [number, CubinParam][] | undefined {
  const view = new DataView(image.buffer, image.byteOffset + section.offset, section.size);
  const out: [number, CubinParam][] = [];
  let at = 0;
  while (at + 2 <= section.size) {
    const format = view.getUint8(at);
    const attribute = view.getUint8(at + 1);
    at += 2;
    if (format === FORMAT_NONE || format === FORMAT_BYTE || format === FORMAT_HALF) at += 2;
    else if (format === FORMAT_SIZED) {
      if (at + 2 > section.size) return undefined;
      const length = view.getUint16(at, true);
      at += 2;
      if (at + length > section.size) return undefined;
      if (attribute === EIATTR_KPARAM_INFO && length >= 12) {
        const ordinal = view.getUint16(at + 4, true);
        out.push([ordinal, { offset: view.getUint16(at + 6, true), size: view.getUint32(at + 8, true) >>> 18 }]);
      }
      at += length;
    } else return undefined;
  }
  return out;
}

/**
 * The parameter layout (offset and size of each parameter, in order) of `kernel` in a cubin, read
 * from its `.nv.info.<kernel>` section; `[]` for a kernel without parameters; undefined when the
 * image is not an ELF cubin, has no such kernel, or its records do not form ordinals 0..n−1.
 * Postcondition (tested against nvcc's output): equal to the layout the kernel was declared with.
 */
export function cubinKernelParams(image: Uint8Array, kernel: string): CubinParam[] | undefined {
  const sections = elfSections(image);
  if (sections === undefined) return undefined;
  const info = sections.find((s) => s.name === `.nv.info.${kernel}`);
  if (info === undefined) return sections.some((s) => s.name === `.text.${kernel}`) ? [] : undefined;
  if (info.offset + info.size > image.length) return undefined;
  const records = kparamRecords(image, info);
  if (records === undefined) return undefined;
  const params: CubinParam[] = [];
  for (const [ordinal, param] of records) params[ordinal] = param;
  if (params.length !== records.length || params.some((p) => p === undefined)) return undefined;
  return params;
}
