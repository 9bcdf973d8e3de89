// GPU tests of the sm_80 attention forward (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): every sm_80 catalog instance, built for the device's arch (sm_90a on an H200: the sm_80
// cubin does not load there; sm_80 on an A100), against the fp32 CPU reference (probabilities not
// narrowed) on ragged shapes (seqlens 1, 17, 127, 259, 1000), causal and sliding-window masks
// including windows that fully mask rows, GQA, varlen with an empty sequence, both layouts, LSE (and
// a run without LSE). O is filled with a NaN sentinel first, so a row the kernel skips fails. Skipped
// (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sm80, sm90a } from '@tilekit/codegen';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import { buildOncePerInstance, Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { fmhaFwdCommonGpuCases, runFmhaFwdGpuCase, type FmhaFwdGpuCase, type FmhaFwdGpuKernel } from '@tilekit/fmha-launch/testing';
import { FMHA_FWD_SM80_CATALOG, fmhaFwdSm80CatalogFor } from './fmhaFwdSm80Catalog.ts';
import { FmhaFwdSm80Instance, type FmhaFwdSm80InstancePolicy } from './fmhaFwdSm80Instance.ts';
import { FmhaFwdSm80Kernel } from './fmhaFwdSm80Launcher.ts';

const kernelFor = buildOncePerInstance((instance: FmhaFwdSm80Instance) => {
  const compiler = gpuTestCompiler('fmha-sm80-gpu');
  return FmhaFwdSm80Kernel.build(instance, { device: Device.open(0), compiler });
});

/** The catalog built for the device's arch (sm_80 code runs on sm_90 only when compiled for it). */
function catalogForDevice(): readonly FmhaFwdSm80Instance[] {
  const arch = Device.open(0).arch;
  if (arch === 'sm_80') return fmhaFwdSm80CatalogFor(sm80);
  assert.equal(arch, 'sm_90a', `the sm_80 attention tests need an sm_80 or sm_90a device, got ${arch}`);
  return fmhaFwdSm80CatalogFor(sm90a);
}

interface Case extends FmhaFwdGpuCase {
  /** A pipeline variant outside the catalog (built for the device like the catalog). */
  readonly variant?: FmhaFwdSm80InstancePolicy;
}

function instanceFor(c: Case): FmhaFwdSm80Instance {
  if (c.variant !== undefined) return new FmhaFwdSm80Instance(c.variant, catalogForDevice()[0]!.target);
  const found = catalogForDevice().find(
    (i) =>
      i.policy.dtype === c.dtype &&
      i.policy.headDim === c.d &&
      i.policy.headDimV === c.d &&
      i.policy.mask === (c.mask.kind === 'none' ? 'none' : 'window'),
  );
  assert.ok(found, `no sm_80 instance for ${JSON.stringify(c)}`);
  return found;
}

/** The kernel of `instanceFor(c)` (cp.async loads: no tensor maps). */
async function kernelForCase(c: Case): Promise<FmhaFwdGpuKernel> {
  const kernel = await kernelFor(instanceFor(c));
  return { name: kernel.instance.name, launch: (problem, buffers) => kernel.prepare(problem, buffers).launch() };
}

const cases: readonly Case[] = [
  ...fmhaFwdCommonGpuCases,
  {
    label: 'bf16 d64 sliding window t:5,0 sq259 > sk100: rows from 105 on fully masked',
    dtype: 'bf16',
    d: 64,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 100,
    layout: 'bshd',
    mask: slidingWindowMask(5, 0),
  },
  {
    label: 'fp16 d64 sliding window b:3,2 sq127 sk17: the first rows fully masked',
    dtype: 'fp16',
    d: 64,
    batch: 2,
    h: 2,
    sq: 127,
    sk: 17,
    layout: 'bhsd',
    mask: slidingWindowMask(3, 2, 'bottomRight'),
  },
  {
    label: 'fp16 d64 varlen causal bottom-right q 17,0,259 k 259,3,17, bhsd',
    dtype: 'fp16',
    d: 64,
    batch: 3,
    h: 2,
    sq: [17, 0, 259],
    sk: [259, 3, 17],
    layout: 'bhsd',
    mask: causalBottomRight,
  },
  {
    label: 'bf16 d64 varlen window t:31,0 q 1000,1 k 1000,127, bshd, GQA 2:1',
    dtype: 'bf16',
    d: 64,
    batch: 2,
    h: 2,
    hk: 1,
    sq: [1000, 1],
    sk: [1000, 127],
    layout: 'bshd',
    mask: slidingWindowMask(31, 0),
  },
  { label: 'fp16 d64 no mask s1 sk1000', dtype: 'fp16', d: 64, batch: 1, h: 2, sq: 1, sk: 1000, layout: 'bhsd', mask: noMask },
  {
    label: 'fp16 d64 causal top-left s259, bshd',
    dtype: 'fp16',
    d: 64,
    batch: 2,
    h: 2,
    sq: 259,
    sk: 259,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  {
    label: 'bf16 d64 no mask sq17 sk127 (GQA 4:1), no LSE',
    dtype: 'bf16',
    d: 64,
    batch: 2,
    h: 4,
    hk: 1,
    sq: 17,
    sk: 127,
    layout: 'bhsd',
    mask: noMask,
    lse: false,
  },
  {
    label: 'bf16 d128 no mask s1000, bshd, no LSE',
    dtype: 'bf16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 1000,
    sk: 1000,
    layout: 'bshd',
    mask: noMask,
    lse: false,
  },
  // Variants outside the catalog: Q re-read from shared memory each key tile (d 256), 4 warps (d 32).
  {
    label: 'variant bf16 d256 (Q in shared memory, 128×32 tiles) causal bottom-right sq259 sk300',
    dtype: 'bf16',
    d: 256,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 300,
    layout: 'bhsd',
    mask: causalBottomRight,
    variant: { dtype: 'bf16', headDim: 256, headDimV: 256, tileM: 128, tileN: 32, qResidence: 'shared', mask: 'window' },
  },
  {
    label: 'variant fp16 d32 (4 warps, 64×64 tiles) no mask sq127 sk1000, bshd',
    dtype: 'fp16',
    d: 32,
    batch: 2,
    h: 2,
    sq: 127,
    sk: 1000,
    layout: 'bshd',
    mask: noMask,
    variant: { dtype: 'fp16', headDim: 32, headDimV: 32, tileM: 64, tileN: 64, qResidence: 'registers', mask: 'none' },
  },
];

test('kernel-fmha-fwd sm80/gpu: the cases cover every catalog instance', () => {
  const used = new Set(cases.map((c) => `${c.dtype} ${c.d} ${c.mask.kind === 'none' ? 'none' : 'window'}`));
  for (const i of FMHA_FWD_SM80_CATALOG)
    assert.ok(used.has(`${i.policy.dtype} ${i.policy.headDim} ${i.policy.mask}`), `no case runs ${i.name}`);
});

for (const c of cases) {
  test(`kernel-fmha-fwd sm80/gpu: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaFwdGpuCase(c, await kernelForCase(c)));
  });
}
