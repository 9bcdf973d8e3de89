// The buffer checks the sparse MLA launchers share: each present, large enough and aligned, the optional ones exactly
// when the config says so, and no output overlapping an input or another output — every problem named.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';

/** Bytes and alignment of one buffer. */
export type DsaBufferSize = readonly [bytes: number, align: number];

/** What {@link checkDsaSparseMlaBuffers} checks: sizes by name, which are outputs, and the optional ones with their config flags. */
export interface DsaSparseMlaBufferRules<K extends string> {
  readonly sizes: { readonly [N in K]: DsaBufferSize };
  /** Buffers the kernels write (checked against every other buffer for overlap). */
  readonly outputs: readonly K[];
  /** Optional buffers: [name, whether the config gives it, the config flag's name]. */
  readonly optional: readonly (readonly [K, boolean, string])[];
}

/**
 * Checks `buffers` against `rules`: every non-optional buffer and every optional one the config gives is a device range
 * of at least its bytes and aligned; an optional one the config does not give is absent; no output overlaps any other
 * given buffer.
 * @throws ArgumentError naming `buffers` when it is not an object, else every broken buffer (`buffers.<name>`) and its rule.
 */
export function checkDsaSparseMlaBuffers<K extends string>(buffers: unknown, rules: DsaSparseMlaBufferRules<K>): void {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const b = buffers as Readonly<Record<K, DeviceRange | undefined>>;
  const v = new ArgumentProblems(ArgumentError);
  const optional = new Map(rules.optional.map(([k, given, flag]) => [k, { given, flag }]));
  const names = Object.keys(rules.sizes) as K[];
  for (const k of names) {
    const o = optional.get(k);
    if (o !== undefined && !o.given) {
      if (b[k] !== undefined) v.report(`buffers.${k}`, `is read only when config.${o.flag} is true`, b[k]);
      continue;
    }
    v.check(() => checkDeviceRange(`buffers.${k}`, b[k], rules.sizes[k][0], rules.sizes[k][1]));
  }
  v.throwIfAny();
  const range = (k: K): readonly [bigint, bigint] | undefined =>
    b[k] === undefined ? undefined : [b[k].ptr, b[k].ptr + BigInt(rules.sizes[k][0])];
  rules.outputs.forEach((out, i) => {
    const o = range(out);
    if (o === undefined) return;
    for (const other of names.filter((n) => n !== out && !rules.outputs.slice(0, i).includes(n))) {
      const r = range(other);
      if (r !== undefined && o[0] < r[1] && r[0] < o[1])
        v.report(`buffers.${out}`, `must not overlap buffers.${other}`, `0x${o[0].toString(16)}`);
    }
  });
  v.throwIfAny();
}
