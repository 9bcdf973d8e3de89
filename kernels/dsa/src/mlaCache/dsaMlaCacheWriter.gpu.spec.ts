// GPU tests of the FP8 MLA latent cache writer (node:test; run on the GPU machine): random latent rows (every tile
// regime of dsaRandomMlaLatent: full-entropy bf16, ±0 and zero tiles, huge and tiny magnitudes, subnormals, the bf16
// maximum) written at random slots with −1 skips, padded page strides and latent strides (the padding between rows
// filled with NaN patterns the writer must not read); the whole cache — untouched rows and page padding included —
// must equal dsaQuantizeMlaLatent + dsaWriteMlaCacheReference bit for bit. Slots past the cache and negative slots
// other than −1 must write nothing. Prints the time of a large write (not asserted). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '@tilekit/host';
import { buildOncePerInstance, Device, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { DsaKernel } from '../dsaKernel.ts';
import { DSA_MLA_LATENT_DIM, DSA_MLA_PAGE_BYTES, DSA_MLA_TOKEN_BYTES } from '../dsaMlaCacheLayout.ts';
import { dsaQuantizeMlaLatent } from '../reference/dsaQuantizeMlaLatent.ts';
import { dsaWriteMlaCacheReference } from '../reference/dsaWriteMlaCacheReference.ts';
import { dsaRandomMlaLatent, type DsaMlaTileRegime } from '../testing/dsaRandomMlaLatent.ts';
import type { DsaMlaCacheWriterInstance } from './dsaMlaCacheWriterInstance.ts';
import { checkDsaMlaCacheWriteConfig, packDsaMlaCacheWrite } from './dsaMlaCacheWriterLauncher.ts';

if (gpu.options.skip !== undefined)
  console.warn(`\n!!! SKIPPING the DSA MLA cache-writer GPU tests: ${gpu.options.skip}. The kernel is NOT being run. !!!\n`);

const NAME = 'kernel-dsa/gpu mla cache writer: ';
const PADDED_PAGE = 65 * DSA_MLA_TOKEN_BYTES;
const FILL = 0xa5;

const writer = buildOncePerInstance((i: DsaMlaCacheWriterInstance) =>
  DsaKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('dsa-mla-cache-gpu') }),
);

/** Device buffers that are freed together. */
class Buffers {
  readonly device = Device.open(0);
  private readonly owned: DeviceBuffer[] = [];
  up(x: ArrayBufferView): DeviceBuffer {
    const b = this.device.upload(x);
    this.owned.push(b);
    return b;
  }
  alloc(bytes: number): DeviceBuffer {
    const b = this.device.alloc(Math.max(16, bytes)).fill(FILL);
    this.owned.push(b);
    return b;
  }
  dispose(): void {
    this.device.synchronize();
    for (const b of this.owned) b.dispose();
  }
}

interface WriteCase {
  readonly label: string;
  readonly tokens: number;
  readonly numPages: number;
  readonly pageStride?: number;
  readonly latentStride?: number;
  /** Fraction of tokens given slot −1 (default 0.1). */
  readonly skipRate?: number;
  /** Fraction of tokens given a slot past the cache or a negative slot other than −1 (default 0). */
  readonly strayRate?: number;
  readonly regimes?: readonly DsaMlaTileRegime[];
}

/** Distinct random slots of the cache (a partial Fisher–Yates shuffle), −1 at `skipRate`, strays at `strayRate`. */
function randomSlots(c: WriteCase, rng: Prng): Int32Array {
  const all = Int32Array.from({ length: c.numPages * 64 }, (_, i) => i);
  return Int32Array.from({ length: c.tokens }, (_, t) => {
    const j = rng.nextInt(t, all.length - 1);
    [all[t], all[j]] = [all[j]!, all[t]!];
    const u = rng.nextFloat();
    if (u < (c.skipRate ?? 0.1)) return -1;
    if (u < (c.skipRate ?? 0.1) + (c.strayRate ?? 0))
      return rng.nextInt(0, 1) === 0 ? c.numPages * 64 + rng.nextInt(0, 200) : -rng.nextInt(2, 1000);
    return all[t]!;
  });
}

/** The bf16 bits of [tokens][576] bf16-valued rows, laid out `stride` elements apart with NaN patterns in the gaps. */
function stridedBf16(latent: Float32Array, tokens: number, stride: number): Uint16Array {
  const words = new Uint32Array(latent.buffer, latent.byteOffset, latent.length);
  const out = new Uint16Array(Math.max(1, tokens * stride)).fill(0x7fc1);
  for (let t = 0; t < tokens; t++)
    for (let i = 0; i < DSA_MLA_LATENT_DIM; i++) out[t * stride + i] = words[t * DSA_MLA_LATENT_DIM + i]! >>> 16;
  return out;
}

async function runCase(c: WriteCase, seed: number): Promise<string> {
  const rng = new Prng(seed);
  const latent = dsaRandomMlaLatent(c.tokens, rng, c.regimes);
  const slots = randomSlots(c, rng);
  const config = checkDsaMlaCacheWriteConfig(c);
  const expected = new Uint8Array(c.numPages * config.pageStride).fill(FILL);
  const referenceSlots = slots.map((s) => (s >= 0 && s < c.numPages * 64 ? s : -1));
  dsaWriteMlaCacheReference({
    cache: expected,
    pageStride: config.pageStride,
    latent: dsaQuantizeMlaLatent(latent, c.tokens),
    slots: referenceSlots,
  });
  const bufs = new Buffers();
  try {
    const cache = bufs.alloc(expected.length);
    const buffers = {
      latent: bufs.up(stridedBf16(latent, c.tokens, config.latentStride)),
      slots: bufs.up(slots.length ? slots : new Int32Array(4)),
      cache,
    };
    const packed = packDsaMlaCacheWrite(config, buffers);
    (await writer(packed.instance)).launch(packed);
    bufs.device.synchronize();
    const host = new Uint8Array(expected.length);
    cache.copyToHost(host);
    let differ = 0;
    let first = -1;
    for (let i = 0; i < host.length; i++) {
      if (host[i] === expected[i]) continue;
      differ++;
      if (first < 0) first = i;
    }
    const where =
      first < 0
        ? ''
        : ` (first at byte ${first}: page ${Math.floor(first / config.pageStride)}, byte ${(first % config.pageStride) % DSA_MLA_TOKEN_BYTES} of its row)`;
    assert.equal(differ, 0, `${c.label}: the GPU-written cache differs from the reference in ${differ} of ${host.length} bytes${where}`);
    const written = referenceSlots.filter((s) => s >= 0).length;
    return `  ${packed.instance.name} grid ${packed.grid[0]}: ${written} rows written, ${host.length} bytes equal`;
  } finally {
    bufs.dispose();
  }
}

const cases: WriteCase[] = [
  { label: '1 token, one page', tokens: 1, numPages: 1, skipRate: 0 },
  {
    label: '17 tokens, padded pages, latent stride 584, −1 slots',
    tokens: 17,
    numPages: 2,
    pageStride: PADDED_PAGE,
    latentStride: 584,
    skipRate: 0.2,
  },
  { label: '300 tokens over 6 pages, every tile regime', tokens: 300, numPages: 6 },
  {
    label: '1000 tokens, full-entropy bf16 only, padded pages',
    tokens: 1000,
    numPages: 20,
    pageStride: PADDED_PAGE,
    regimes: ['fullEntropy'],
  },
  {
    label: '513 tokens, zero, subnormal and extreme tiles, stride 1024',
    tokens: 513,
    numPages: 9,
    latentStride: 1024,
    regimes: ['zero', 'signedZero', 'subnormal', 'extremes'],
  },
  {
    label: '200 tokens, slots past the cache and below −1 write nothing',
    tokens: 200,
    numPages: 4,
    pageStride: DSA_MLA_PAGE_BYTES + 16,
    strayRate: 0.3,
  },
  { label: '0 tokens (one block, writes nothing)', tokens: 0, numPages: 1 },
];
for (const [i, c] of cases.entries()) test(`${NAME}${c.label}`, gpu.options, async () => console.log(await runCase(c, 2100 + i)));

test(`${NAME}time 131072 tokens, one 64-token page each 64 (printed, not asserted)`, gpu.options, async () => {
  const tokens = 131_072;
  const bufs = new Buffers();
  try {
    const config = checkDsaMlaCacheWriteConfig({ tokens, numPages: tokens / 64 });
    const latent = new Uint16Array(tokens * DSA_MLA_LATENT_DIM).map((_, i) => (i * 2654435761) >>> 17);
    const slots = Int32Array.from({ length: tokens }, (_, t) => t);
    const packed = packDsaMlaCacheWrite(config, {
      latent: bufs.up(latent),
      slots: bufs.up(slots),
      cache: bufs.alloc(tokens * DSA_MLA_TOKEN_BYTES),
    });
    const kernel = await writer(packed.instance);
    const ms = timeLaunches(bufs.device, () => kernel.launch(packed), { warmup: 3, repeat: 11 }).sort((x, y) => x - y)[5]!;
    const bytes = tokens * (DSA_MLA_LATENT_DIM * 2 + DSA_MLA_TOKEN_BYTES + 4);
    console.log(`  ${packed.instance.name}: median ${(ms * 1000).toFixed(1)} µs, ${(bytes / ms / 1e6).toFixed(0)} GB/s read + written`);
  } finally {
    bufs.dispose();
  }
});
