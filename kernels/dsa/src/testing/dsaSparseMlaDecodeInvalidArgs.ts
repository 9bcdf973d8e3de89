// Random invalid argument sets of the sparse MLA decode's launcher (`checkDsaSparseMlaDecodeConfig` +
// `packDsaSparseMlaDecode` + `DsaKernel.launch` of its decode and combine): a random valid call (a config, buffers of
// exactly the bytes it needs, the split workspace when it splits) with one to three corruptions — bad b, sQ, hQ, topk,
// numPages, page stride, sm_scale or flags, a config larger than its buffers, a bad requested split count, buffers too
// small, misaligned, missing, not buffers, given where the config does not read them, or an output overlapping an
// input. Used by the CI fuzz spec (fake addon).
import fc from 'fast-check';
import {
  allocPlan,
  BAD_SIZES,
  bufferCorruptions,
  invalidCalls,
  type BufferPlan,
  type Corruption,
  type InvalidCall,
} from '@tilekit/runtime/testing';
import { dsaSparseMlaDecodeBufferBytes, dsaSparseMlaDecodeSplit } from '../attention/dsaSparseMlaDecodeLauncher.ts';
import { checkDsaSparseMlaDecodeConfig, type DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';

/** SMs the fuzz packs for (an H100's or H200's). */
export const DSA_DECODE_FUZZ_SMS = 132;

/** The buffers of a call. */
export type DsaSparseMlaDecodeFuzzBuffer =
  'q' | 'cache' | 'indices' | 'topkLength' | 'attnSink' | 'out' | 'lse' | 'maxLogits' | 'workspace';

/** One decode call as data: the config (possibly corrupted), the buffers and the requested split count (or none). */
export interface DsaSparseMlaDecodeFuzzCall {
  readonly config: Readonly<Record<string, unknown>>;
  readonly buffers: Readonly<Partial<Record<DsaSparseMlaDecodeFuzzBuffer, BufferPlan>>>;
  readonly splits?: unknown;
}

function configs(): fc.Arbitrary<DsaSparseMlaDecodeConfig> {
  return fc.record({
    b: fc.integer({ min: 1, max: 4 }),
    sQ: fc.constantFrom(1, 2),
    hQ: fc.constantFrom(64, 128),
    topk: fc.integer({ min: 1, max: 300 }),
    numPages: fc.integer({ min: 1, max: 4 }),
    pageStrideBytes: fc.constantFrom(41984, 41984 + 16, 65 * 656),
    smScale: fc.constantFrom(0.135234, 0.04, 1),
    hasSink: fc.boolean(),
    hasTopkLength: fc.boolean(),
  });
}

/** The bytes each buffer of a checked config needs (0: not read), the workspace for the launcher's split on the fuzz's SMs. */
export function dsaSparseMlaDecodeFuzzBytes(c: DsaSparseMlaDecodeConfig): Readonly<Record<DsaSparseMlaDecodeFuzzBuffer, number>> {
  return dsaSparseMlaDecodeBufferBytes(c, dsaSparseMlaDecodeSplit(c, DSA_DECODE_FUZZ_SMS).splits);
}

/** Valid calls: a config and buffers of exactly the bytes it needs (none for what it does not read). */
export function validDsaSparseMlaDecodeCalls(): fc.Arbitrary<DsaSparseMlaDecodeFuzzCall> {
  return configs().map((config) => {
    const bytes = dsaSparseMlaDecodeFuzzBytes(checkDsaSparseMlaDecodeConfig(config));
    const buffers: Partial<Record<DsaSparseMlaDecodeFuzzBuffer, BufferPlan>> = {};
    for (const [k, n] of Object.entries(bytes) as [DsaSparseMlaDecodeFuzzBuffer, number][]) if (n > 0) buffers[k] = allocPlan(n);
    return { config: config as unknown as Record<string, unknown>, buffers };
  });
}

function setField(field: string, value: unknown, label = `config.${field} = ${String(value)}`): Corruption<DsaSparseMlaDecodeFuzzCall> {
  return { target: `config.${field}`, label, apply: (c) => ({ ...c, config: { ...c.config, [field]: value } }) };
}

/** Grows a size field past the buffers sized for the original. */
function grown(c: DsaSparseMlaDecodeFuzzCall, field: 'b' | 'topk'): fc.Arbitrary<Corruption<DsaSparseMlaDecodeFuzzCall>> {
  const x = c.config[field] as number;
  return fc.integer({ min: 2, max: 4 }).map((k) => setField(field, x * k, `config.${field} × ${k} (buffers sized for the original)`));
}

/** The config's corruptions: values off their sets or ranges, sizes grown past the buffers, flags flipped or not booleans. */
function configCorruptions(c: DsaSparseMlaDecodeFuzzCall): fc.Arbitrary<Corruption<DsaSparseMlaDecodeFuzzCall>>[] {
  return [
    fc.tuple(fc.constantFrom('b', 'topk', 'numPages', 'pageStrideBytes'), fc.constantFrom(...BAD_SIZES)).map(([f, v]) => setField(f, v)),
    fc.constantFrom<unknown>(0, 3, 1.5, '1', null).map((v) => setField('sQ', v)),
    fc.constantFrom<unknown>(32, 96, 256, 0).map((v) => setField('hQ', v)),
    fc.constantFrom(32769, 2 ** 31).map((v) => setField('topk', v)),
    fc.constantFrom(41983, 41984 + 8, 2 ** 53).map((v) => setField('pageStrideBytes', v)),
    fc.constantFrom<unknown>(0, -1, Number.NaN, Infinity, '0.1').map((v) => setField('smScale', v)),
    fc.constantFrom('hasSink', 'hasTopkLength').map((f) => setField(f, !c.config[f], `config.${f} flipped (buffers as before)`)),
    fc.constantFrom('hasSink', 'hasTopkLength').map((f) => setField(f, 1)),
    fc.constant(setField('b', 2 ** 31 - 1, 'config.b = 2^31 − 1 (past the grid)')),
    grown(c, 'b'),
    grown(c, 'topk'),
  ];
}

/** A requested split count that is not a positive integer. */
function splitCorruptions(): fc.Arbitrary<Corruption<DsaSparseMlaDecodeFuzzCall>> {
  return fc
    .constantFrom<unknown>(0, -1, 1.5, Number.NaN, '2')
    .map((v) => ({ target: 'options.splits', label: `options.splits = ${String(v)}`, apply: (c) => ({ ...c, splits: v }) }));
}

/** Invalid calls: a valid one with one to three corruptions of the config, the split count or the buffers. */
export function invalidDsaSparseMlaDecodeCalls(): fc.Arbitrary<InvalidCall<DsaSparseMlaDecodeFuzzCall>> {
  return invalidCalls(validDsaSparseMlaDecodeCalls(), (c) => {
    const need = (name: DsaSparseMlaDecodeFuzzBuffer): number => (c.buffers[name] as { bytes: number } | undefined)?.bytes ?? 0;
    const inputs: DsaSparseMlaDecodeFuzzBuffer[] = ['q', 'cache', 'indices'];
    return [
      ...configCorruptions(c),
      splitCorruptions(),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('q', { need: need('q'), align: 16 }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('cache', { need: need('cache'), align: 16 }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('indices', { need: need('indices'), align: 4 }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('topkLength', { need: need('topkLength'), align: 4, optional: true }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('attnSink', { need: need('attnSink'), align: 4, optional: true }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('out', { need: need('out'), align: 16, overlaps: inputs }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('lse', { need: need('lse'), align: 4, overlaps: ['q'] }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('maxLogits', { need: need('maxLogits'), align: 4, overlaps: ['indices'] }),
      ...bufferCorruptions<DsaSparseMlaDecodeFuzzCall>('workspace', { need: need('workspace'), align: 16, optional: true }),
    ];
  });
}
