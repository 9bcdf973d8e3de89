// Random invalid argument sets of the FP8 MLA cache writer's launcher (`checkDsaMlaCacheWriteConfig` +
// `packDsaMlaCacheWrite` + `DsaKernel.launch`): a random valid call (a config, buffers of exactly the bytes it needs)
// with one to three corruptions — bad tokens, numPages, latentStride or pageStride, a config larger than its buffers,
// buffers too small, misaligned, missing, not buffers, or a cache overlapping an input. Used by the CI fuzz spec (fake addon).
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
import {
  checkDsaMlaCacheWriteConfig,
  dsaMlaCacheWriteBufferBytes,
  type DsaMlaCacheWriteConfig,
} from '../mlaCache/dsaMlaCacheWriterLauncher.ts';

/** The buffers of a call. */
export type DsaMlaCacheWriteFuzzBuffer = 'latent' | 'slots' | 'cache';

/** One MLA cache-writer call as data: the config (possibly corrupted) and the buffers. */
export interface DsaMlaCacheWriteFuzzCall {
  readonly config: Readonly<Record<string, unknown>>;
  readonly buffers: Readonly<Partial<Record<DsaMlaCacheWriteFuzzBuffer, BufferPlan>>>;
}

function configs(): fc.Arbitrary<DsaMlaCacheWriteConfig> {
  return fc
    .record({
      tokens: fc.integer({ min: 0, max: 300 }),
      numPages: fc.integer({ min: 1, max: 6 }),
      latentStride: fc.option(fc.integer({ min: 72, max: 100 }).map((x) => 8 * x)),
      pageStride: fc.option(fc.constantFrom(41984, 65 * 656, 41984 + 16)),
    })
    .map(({ tokens, numPages, latentStride, pageStride }) => ({
      tokens,
      numPages,
      ...(latentStride === null ? {} : { latentStride }),
      ...(pageStride === null ? {} : { pageStride }),
    }));
}

/** Valid calls: a config and buffers of exactly the bytes it needs. */
export function validDsaMlaCacheWriteCalls(): fc.Arbitrary<DsaMlaCacheWriteFuzzCall> {
  return configs().map((config) => {
    const bytes = dsaMlaCacheWriteBufferBytes(checkDsaMlaCacheWriteConfig(config));
    const buffers = { latent: allocPlan(bytes.latent), slots: allocPlan(bytes.slots), cache: allocPlan(bytes.cache) };
    return { config: config as unknown as Record<string, unknown>, buffers };
  });
}

function setField(field: string, value: unknown, label = `config.${field} = ${String(value)}`): Corruption<DsaMlaCacheWriteFuzzCall> {
  return { target: `config.${field}`, label, apply: (c) => ({ ...c, config: { ...c.config, [field]: value } }) };
}

/** The config's corruptions: bad sizes, strides off their multiple or range, a config grown past its buffers. */
function configCorruptions(c: DsaMlaCacheWriteFuzzCall): fc.Arbitrary<Corruption<DsaMlaCacheWriteFuzzCall>>[] {
  const out = [
    fc.tuple(fc.constantFrom('numPages', 'latentStride', 'pageStride'), fc.constantFrom(...BAD_SIZES)).map(([f, v]) => setField(f, v)),
    fc.constantFrom<unknown>(-1, 1.5, Number.NaN, 2 ** 31, '8', null).map((v) => setField('tokens', v)),
    fc.constantFrom(575, 580, 2 ** 30 + 8).map((v) => setField('latentStride', v)),
    fc.constantFrom(41983, 41984 + 8, 65 * 656 + 4, 2 ** 30 + 16).map((v) => setField('pageStride', v)),
    fc.constantFrom(2 ** 31).map((v) => setField('numPages', v)),
    fc
      .integer({ min: 2, max: 4 })
      .map((x) => setField('numPages', (c.config['numPages'] as number) * x, `config.numPages × ${x} (buffers sized for the original)`)),
  ];
  if ((c.config['tokens'] as number) > 0)
    out.push(
      fc
        .integer({ min: 2, max: 4 })
        .map((x) => setField('tokens', (c.config['tokens'] as number) * x, `config.tokens × ${x} (buffers sized for the original)`)),
    );
  return out;
}

/** Invalid calls: a valid one with one to three corruptions of the config or the buffers. */
export function invalidDsaMlaCacheWriteCalls(): fc.Arbitrary<InvalidCall<DsaMlaCacheWriteFuzzCall>> {
  return invalidCalls(validDsaMlaCacheWriteCalls(), (c) => {
    const need = (name: DsaMlaCacheWriteFuzzBuffer): number => (c.buffers[name] as { bytes: number } | undefined)?.bytes ?? 0;
    return [
      ...configCorruptions(c),
      ...bufferCorruptions<DsaMlaCacheWriteFuzzCall>('latent', { need: need('latent'), align: 16 }),
      ...bufferCorruptions<DsaMlaCacheWriteFuzzCall>('slots', { need: need('slots'), align: 4 }),
      ...bufferCorruptions<DsaMlaCacheWriteFuzzCall>('cache', {
        need: need('cache'),
        align: 16,
        overlaps: need('slots') > 0 ? ['latent', 'slots'] : [],
      }),
    ];
  });
}
