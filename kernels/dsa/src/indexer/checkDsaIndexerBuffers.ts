// The device-buffer checks both indexer launchers make: sizes and alignments, then logits overlapping no input.
import { ArgumentProblems, ArgumentError } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';

/**
 * Checks every buffer of `align` (at least `bytes[key]` bytes, aligned to `align[key]`), then that
 * `buffers.logits` overlaps none of the others (the indexer reads them while writing logits).
 * @throws ArgumentError naming every broken buffer (`buffers.<key>`) and its rule.
 */
export function checkDsaIndexerBuffers<K extends string>(
  buffers: Readonly<Record<K | 'logits', DeviceRange>>,
  bytes: Readonly<Record<K | 'logits', number>>,
  align: Readonly<Record<K | 'logits', number>>,
): void {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const keys = Object.keys(align) as (K | 'logits')[];
  const v = new ArgumentProblems(ArgumentError);
  for (const key of keys) v.check(() => checkDeviceRange(`buffers.${key}`, buffers[key], bytes[key], align[key]));
  v.throwIfAny();
  const out = buffers.logits;
  for (const other of keys.filter((k) => k !== 'logits')) {
    const x = buffers[other];
    if (out.ptr < x.ptr + BigInt(bytes[other]) && x.ptr < out.ptr + BigInt(bytes.logits))
      v.report(
        'buffers.logits',
        `must not overlap buffers.${other} (the indexer reads it while writing logits)`,
        `0x${out.ptr.toString(16)}`,
      );
  }
  v.throwIfAny();
}
