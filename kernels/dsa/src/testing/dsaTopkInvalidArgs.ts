// Random invalid argument sets of the top-k launcher (`checkDsaTopkConfig` + `packDsaTopk` +
// `DsaTopkKernel.launch`): a random valid call (a config, buffers of exactly the bytes it needs)
// with one to three corruptions — bad rows, rowStride, k or page table, a config larger than its
// buffers, buffers too small, misaligned, missing, not buffers, overlapping the output, or a block
// table without the page-table form. Used by the CI fuzz spec (fake addon).
import fc from 'fast-check';
import {
  allocPlan,
  BAD_SIZES,
  bufferCorruptions,
  invalidCalls,
  withBuffer,
  type BufferPlan,
  type Corruption,
  type InvalidCall,
} from '@tilekit/runtime/testing';
import { checkDsaTopkConfig, dsaTopkBufferBytes, type DsaTopkConfig } from '../topk/dsaTopkLauncher.ts';

/** The buffers of a call. */
export type DsaTopkFuzzBuffer = 'logits' | 'lengths' | 'out' | 'blockTable';

/** One top-k call as data: the config (possibly corrupted) and the buffers. */
export interface DsaTopkFuzzCall {
  readonly config: Readonly<Record<string, unknown>>;
  readonly buffers: Readonly<Partial<Record<DsaTopkFuzzBuffer, BufferPlan>>>;
}

function configs(): fc.Arbitrary<DsaTopkConfig> {
  return fc
    .record({
      sequences: fc.integer({ min: 1, max: 4 }),
      rowsPerSequence: fc.constantFrom(1, 2),
      rowStride: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 9000 })),
      k: fc.oneof(fc.constantFrom(1, 7, 2048, 4096), fc.integer({ min: 1, max: 4096 })),
      paged: fc.boolean(),
      extraPages: fc.integer({ min: 0, max: 3 }),
    })
    .map((o) => ({
      rows: o.sequences * o.rowsPerSequence,
      rowStride: o.rowStride,
      k: o.k,
      ...(o.paged ? { pageTable: { rowsPerSequence: o.rowsPerSequence, maxPages: Math.ceil(o.rowStride / 64) + o.extraPages } } : {}),
    }));
}

/** Valid calls: a config, logits and out of exactly its bytes, lengths (or none), the block table with the page-table form. */
export function validDsaTopkCalls(): fc.Arbitrary<DsaTopkFuzzCall> {
  return fc.tuple(configs(), fc.boolean()).map(([config, withLengths]) => {
    const bytes = dsaTopkBufferBytes(checkDsaTopkConfig(config));
    const buffers: Partial<Record<DsaTopkFuzzBuffer, BufferPlan>> = { logits: allocPlan(bytes.logits), out: allocPlan(bytes.out) };
    if (withLengths) buffers.lengths = allocPlan(bytes.lengths);
    if (config.pageTable !== undefined) buffers.blockTable = allocPlan(bytes.blockTable);
    return { config: config as unknown as Record<string, unknown>, buffers };
  });
}

function setField(field: string, value: unknown, label = `config.${field} = ${String(value)}`): Corruption<DsaTopkFuzzCall> {
  return { target: `config.${field}`, label, apply: (c) => ({ ...c, config: { ...c.config, [field]: value } }) };
}

function setPage(field: string, value: unknown): Corruption<DsaTopkFuzzCall> {
  return {
    target: 'config.pageTable',
    label: `config.pageTable.${field} = ${String(value)}`,
    apply: (c) => ({ ...c, config: { ...c.config, pageTable: { ...(c.config['pageTable'] as object), [field]: value } } }),
  };
}

/** The config's corruptions: bad sizes, out-of-range k and rowStride, a grown config, a broken page table. */
function configCorruptions(c: DsaTopkFuzzCall): fc.Arbitrary<Corruption<DsaTopkFuzzCall>>[] {
  const paged = c.config['pageTable'] !== undefined;
  const out: fc.Arbitrary<Corruption<DsaTopkFuzzCall>>[] = [
    fc.tuple(fc.constantFrom('rows', 'rowStride', 'k'), fc.constantFrom(...BAD_SIZES, null, undefined)).map(([f, v]) => setField(f, v)),
    fc.constantFrom(4097, 10_000, 2 ** 31).map((v) => setField('k', v)),
    fc.constantFrom(2 ** 30 + 1, 2 ** 31).map((v) => setField('rowStride', v)),
    // A valid config larger than the buffers: they are too small.
    fc
      .tuple(fc.constantFrom('rows', 'rowStride'), fc.integer({ min: 2, max: 4 }))
      .map(([f, x]) => setField(f, (c.config[f] as number) * x, `config.${f} × ${x} (buffers sized for the original)`)),
    fc.constantFrom<unknown>(null, 'pages', 3).map((v) => setField('pageTable', v)),
  ];
  if (paged) {
    out.push(
      fc.constantFrom<unknown>(0, 3, '2', 1.5, null).map((v) => setPage('rowsPerSequence', v)),
      fc.constantFrom<unknown>(0, -1, 0.5, '8', Math.ceil((c.config['rowStride'] as number) / 64) - 1).map((v) => setPage('maxPages', v)),
    );
  }
  return out;
}

/** Invalid calls: a valid one with one to three corruptions of the config or the buffers. */
export function invalidDsaTopkCalls(): fc.Arbitrary<InvalidCall<DsaTopkFuzzCall>> {
  return invalidCalls(validDsaTopkCalls(), (c) => {
    const need = (name: DsaTopkFuzzBuffer): number => (c.buffers[name] as { bytes: number } | undefined)?.bytes ?? 0;
    const inputs = (['logits', 'lengths', 'blockTable'] as const).filter((n) => c.buffers[n] !== undefined);
    const out = [
      ...configCorruptions(c),
      ...bufferCorruptions<DsaTopkFuzzCall>('logits', { need: need('logits'), align: 4 }),
      ...bufferCorruptions<DsaTopkFuzzCall>('out', { need: need('out'), align: 4, overlaps: inputs }),
    ];
    if (c.buffers.lengths !== undefined)
      out.push(...bufferCorruptions<DsaTopkFuzzCall>('lengths', { need: need('lengths'), align: 4, optional: true }));
    if (c.buffers.blockTable !== undefined)
      out.push(...bufferCorruptions<DsaTopkFuzzCall>('blockTable', { need: need('blockTable'), align: 4 }));
    else
      out.push(
        fc.constant({
          target: 'blockTable',
          label: 'a block table without the page-table form',
          apply: (x: DsaTopkFuzzCall) => withBuffer(x, 'blockTable', allocPlan(64)),
        }),
      );
    return out;
  });
}
