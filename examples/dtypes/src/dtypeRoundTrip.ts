import { decode, decodeBigInt, dtypes, encode, encodeBigInt, getDType, roundTo, type DType, type DTypeName } from '@tilekit/numeric';

/** One value carried through one dtype: the stored bits and the value read back. */
export interface RoundTripCell {
  readonly bits: string;
  readonly value: number;
}

export interface RoundTripRow {
  readonly input: number;
  readonly cells: ReadonlyMap<DTypeName, RoundTripCell>;
}

/** Hex spelling of a bit pattern, padded to the dtype's width. */
export function formatBits(dtype: DType, bits: number | bigint): string {
  return `0x${bits.toString(16).padStart(dtype.bits / 4, '0')}`;
}

/** Encodes every input into every dtype (default rounding and saturation) and decodes it back. */
export function roundTripTable(inputs: readonly number[], names: readonly DTypeName[]): RoundTripRow[] {
  return inputs.map((input) => {
    const cells = new Map<DTypeName, RoundTripCell>();
    for (const name of names) {
      const dtype = dtypes[name];
      // int64 patterns exceed 2^53, so they travel as bigint.
      if (name === 'int64') {
        const wide = encodeBigInt(dtype, input);
        cells.set(name, { bits: formatBits(dtype, wide), value: Number(decodeBigInt(dtype, wide)) });
      } else {
        const bits = encode(dtype, input);
        cells.set(name, { bits: formatBits(dtype, bits), value: decode(dtype, bits) });
      }
    }
    return { input, cells };
  });
}

/**
 * Checks the codec the example shows against rules that hold for any correct rounding, without a
 * second codec to compare to: the value read back is what `roundTo` gives, rounding it again
 * changes nothing, and the error is at most half the gap between the neighbours around it.
 * Returns the first broken rule, or undefined.
 */
export function validateRoundTrip(name: DTypeName, input: number): string | undefined {
  const dtype = getDType(name);
  if (dtype.kind !== 'float' || !Number.isFinite(input) || Math.abs(input) > dtype.max) return undefined;
  const bits = encode(dtype, input);
  const back = decode(dtype, bits);
  if (!Object.is(back, roundTo(dtype, input)))
    return `${name}: decode(encode(${input})) = ${back} but roundTo gives ${roundTo(dtype, input)}`;
  if (!Object.is(roundTo(dtype, back), back)) return `${name}: rounding ${back} again moved it`;
  const ulp = ulpAround(dtype, back);
  if (Math.abs(back - input) > ulp / 2) return `${name}: |${back} - ${input}| exceeds half an ulp (${ulp})`;
  return undefined;
}

function ulpAround(dtype: DType, value: number): number {
  const magnitude = Math.abs(value);
  if (magnitude < dtype.minNormal) return dtype.minSubnormal;
  const exponent = Math.floor(Math.log2(magnitude));
  return 2 ** (exponent - dtype.mantissaBits);
}
