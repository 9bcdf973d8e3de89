// GPU tests of the ping-pong instances (node:test; `npm run test:gpu`, or tools/device on the GPU
// machine): each case runs the softmax-overlapped instance of the dense catalog and then the
// ping-pong instance into the same (re-poisoned) O and LSE, requires them bitwise equal (same
// arithmetic, other issue order), then checks the ping-pong result against the fp32 CPU reference
// on ragged shapes, masks that fully mask rows, GQA and varlen with an empty sequence. Skipped
// (loudly, by the runner) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '@tilekit/fmha';
import type { FmhaFwdBuffers } from '@tilekit/fmha-launch';
import { DeviceBuffer, encodeTensorMapTiled } from '@tilekit/runtime';
import { gpu } from '@tilekit/runtime/testing';
import { FMHA_FWD_CATALOG } from './fmhaFwdCatalog.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { FMHA_FWD_PINGPONG_CATALOG } from './fmhaFwdPingPongCatalog.ts';
import { fmhaFwdGpuKernelFor } from './testing/fmhaFwdCatalogGpuKernel.ts';
import { fmhaFwdCommonGpuCases, runFmhaFwdGpuCase, type FmhaFwdGpuCase, type FmhaFwdGpuKernel } from '@tilekit/fmha-launch/testing';

/** The ping-pong instance for `c`, and the dense catalog's instance it must equal bitwise. */
function instancesFor(c: FmhaFwdGpuCase): { pingPong: FmhaFwdInstance; overlapped: FmhaFwdInstance } {
  const mask = c.mask.kind === 'none' ? 'none' : 'window';
  const pingPong = FMHA_FWD_PINGPONG_CATALOG.find((i) => i.policy.dtype === c.dtype && i.policy.headDim === c.d && i.policy.mask === mask);
  assert.ok(pingPong, `no ping-pong instance for ${c.label}`);
  const overlapped = FMHA_FWD_CATALOG.find((i) => `${i.name}_pingpong` === pingPong.name);
  assert.ok(overlapped, `no overlapped instance for ${pingPong.name}`);
  return { pingPong, overlapped };
}

function bytesOf(range: FmhaFwdBuffers['o'] | undefined): Uint8Array | undefined {
  if (range === undefined) return undefined;
  assert.ok(range instanceof DeviceBuffer, 'the harness passes device buffers');
  return range.copyToHost();
}

function firstDifference(a: Uint8Array | undefined, b: Uint8Array | undefined): number {
  if (a === undefined || b === undefined) return a === b ? -1 : 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Launches the overlapped instance, keeps its O and LSE, re-poisons them, launches ping-pong and compares the bytes. */
async function bitwiseCheckedKernel(c: FmhaFwdGpuCase): Promise<FmhaFwdGpuKernel> {
  const { pingPong, overlapped } = instancesFor(c);
  const [pp, ov] = [await fmhaFwdGpuKernelFor(pingPong), await fmhaFwdGpuKernelFor(overlapped)];
  return {
    name: pp.instance.name,
    launch: (problem, buffers, device) => {
      const encode = (o: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, o);
      ov.prepare(problem, buffers, encode).launch();
      device.synchronize();
      const want = [bytesOf(buffers.o), bytesOf(buffers.lse)];
      for (const r of [buffers.o, buffers.lse]) if (r instanceof DeviceBuffer) r.fill(0xff);
      pp.prepare(problem, buffers, encode).launch();
      device.synchronize();
      const got = [bytesOf(buffers.o), bytesOf(buffers.lse)];
      const [dO, dL] = [firstDifference(want[0], got[0]), firstDifference(want[1], got[1])];
      assert.equal(dO, -1, `${pp.instance.name}: O differs from ${ov.instance.name} at byte ${dO}`);
      assert.equal(dL, -1, `${pp.instance.name}: LSE differs from ${ov.instance.name} at byte ${dL}`);
    },
  };
}

const cases: readonly FmhaFwdGpuCase[] = [
  ...fmhaFwdCommonGpuCases.filter((c) => c.d === 64 || c.d === 128),
  { label: 'fp16 d64 no mask s1 sk4097', dtype: 'fp16', d: 64, batch: 1, h: 2, sq: 1, sk: 4097, layout: 'bhsd', mask: noMask },
  {
    label: 'bf16 d64 causal s259 GQA 4:1',
    dtype: 'bf16',
    d: 64,
    batch: 2,
    h: 4,
    hk: 1,
    sq: 259,
    sk: 259,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  { label: 'fp16 d128 causal s4097', dtype: 'fp16', d: 128, batch: 1, h: 1, sq: 4097, sk: 4097, layout: 'bhsd', mask: causalTopLeft },
  {
    label: 'bf16 d128 window t:40,3 varlen q 17,0,127 k 259,5,127',
    dtype: 'bf16',
    d: 128,
    batch: 3,
    h: 2,
    sq: [17, 0, 127],
    sk: [259, 5, 127],
    layout: 'bshd',
    mask: slidingWindowMask(40, 3),
  },
  {
    label: 'fp16 d128 causal bottom-right sq1000 > sk17: most rows fully masked',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 1000,
    sk: 17,
    layout: 'bhsd',
    mask: causalBottomRight,
  },
];

for (const c of cases) {
  test(`kernel-fmha-fwd/gpu ping-pong: ${c.label}`, gpu.options, async () => {
    console.log(await runFmhaFwdGpuCase(c, await bitwiseCheckedKernel(c)));
  });
}
