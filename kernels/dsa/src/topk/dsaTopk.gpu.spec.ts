// GPU tests of the exact top-k kernels (node:test; run by `npm run test:gpu` on the GPU machine):
// seeded logit rows go through packDsaTopk's dispatch (the cluster kernel for rows up to 131072,
// the single-CTA kernel past them) and the [rows][k] output must equal dsaTopkReference (in the
// output hook's form) bit for bit. Cases (dsaTopkGpuCases): ties and all-equal rows, −∞ runs, NaN,
// ±0, rows shorter than k, k > rowStride, lengths 0/1/negative/past the row/not multiples of 64,
// rowStride 1 … 131076, k ∈ {1, 7, 2048, 4096} and random, misaligned logits (scalar loads), the
// page-table form with next_n 1 and 2, the cluster kernel's boundaries; some cases again with every
// cluster size whose slices hold the row. Then prints the kernel times (not asserted) for rows
// 1/32/128 × L 8K/32K/128K at k 2048: the dispatched instance, the single-CTA kernel, the other
// cluster sizes and 1024-thread cluster instances. Skipped without a GPU.
import { test } from 'node:test';
import { buildOncePerInstance, Device, timeBackToBack } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import {
  DSA_TOPK_EVERY_CLUSTER_CASES,
  dsaTopkGpuCases,
  dsaTopkGpuPageTable,
  dsaTopkTimingAlternatives,
  type DsaTopkGpuCase,
} from '../testing/dsaTopkGpuCases.ts';
import { dsaTopkLogits } from '../testing/dsaTopkLogits.ts';
import { DsaTopkCaseBuffers, repackDsaTopk, runDsaTopkGpuRows } from '../testing/dsaTopkGpuRun.ts';
import { DSA_TOPK_CLUSTER_SIZES } from './dsaTopkClusterInstance.ts';
import { DSA_TOPK_CLUSTER_SLICE_CAPACITY, dsaTopkClusterInstanceFor, dsaTopkInstanceFor, dsaTopkVectorFor } from './dsaTopkCatalog.ts';
import {
  checkDsaTopkConfig,
  type DsaTopkAnyInstance,
  type DsaTopkKernel,
  packDsaTopk,
  type DsaTopkPackedLaunch,
} from './dsaTopkLauncher.ts';
import { DsaKernel } from '../dsaKernel.ts';

const buildKernel = buildOncePerInstance((instance: DsaTopkAnyInstance) =>
  DsaKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('dsa-topk-gpu') }),
);

/** Runs case `c` through packDsaTopk (or, with `pick`, the instance it names for the dispatched launch) and checks it against the reference. */
async function runCase(c: DsaTopkGpuCase, pick?: (p: DsaTopkPackedLaunch) => DsaTopkAnyInstance): Promise<string> {
  const table = c.rowsPerSequence === undefined ? undefined : dsaTopkGpuPageTable(c);
  return runDsaTopkGpuRows({ label: c.label, rows: dsaTopkLogits(c.logits), table, logitsOffset: c.logitsOffset }, buildKernel, pick);
}

const cases = dsaTopkGpuCases();
for (const c of cases) {
  test(`kernel-dsa/gpu topk: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}

for (const label of DSA_TOPK_EVERY_CLUSTER_CASES) {
  const c = cases.find((x) => x.label === label)!;
  test(`kernel-dsa/gpu topk, every cluster size: ${label}`, gpu.options, async () => {
    const sizes = DSA_TOPK_CLUSTER_SIZES.filter((n) => c.logits.rowStride <= n * DSA_TOPK_CLUSTER_SLICE_CAPACITY);
    for (const cluster of sizes) {
      const pick = (p: DsaTopkPackedLaunch): DsaTopkAnyInstance =>
        dsaTopkClusterInstanceFor(p.instance.policy.output.kind, p.instance.policy.vector, cluster);
      console.log(await runCase(c, pick));
    }
  });
}

/** The median per-launch time (µs) of back-to-back launches (timeBackToBack: 5 repetitions of about 10 ms each). */
function medianUs(device: Device, kernel: DsaTopkKernel, packed: DsaTopkPackedLaunch): number {
  const options = { warmup: 3, warmupMs: 20, repetitions: 5, targetMs: 10, minLaunches: 20, maxLaunches: 4000 };
  const { reps } = timeBackToBack(device, () => kernel.launch(packed), options);
  return [...reps].sort((x, y) => x - y)[2]! * 1000;
}

/** The instances one timing compares: the dispatched one first, the single-CTA kernel, the other cluster sizes, the 1024-thread cluster instances. */
function timed(dispatched: DsaTopkAnyInstance, rowStride: number): DsaTopkAnyInstance[] {
  const fits = (n: number): boolean => rowStride <= n * DSA_TOPK_CLUSTER_SLICE_CAPACITY;
  const others = DSA_TOPK_CLUSTER_SIZES.filter(fits).map((n) => dsaTopkClusterInstanceFor('index', 4, n));
  const wide = dsaTopkTimingAlternatives().filter((i) => fits(i.policy.cluster));
  const all = [dispatched, dsaTopkInstanceFor('index', dsaTopkVectorFor(rowStride, 0n)), ...others, ...wide];
  return all.filter((x, i) => all.findIndex((y) => y.name === x.name) === i);
}

test('kernel-dsa/gpu topk: time at k 2048, rows 1/32/128 × L 8K/32K/128K (printed, not asserted)', gpu.options, async () => {
  const device = Device.open(0);
  const lines: string[] = [];
  for (const length of [8192, 32768, 131072]) {
    for (const rowCount of [1, 32, 128]) {
      const rows = dsaTopkLogits({ seed: 99, rows: rowCount, rowStride: length, k: 2048, style: 'normal' });
      const mem = new DsaTopkCaseBuffers(device);
      try {
        const config = checkDsaTopkConfig({ rows: rowCount, rowStride: length, k: 2048 });
        const packed = packDsaTopk(config, { logits: mem.upload(rows.logits), out: mem.output(rowCount * 2048 * 4) });
        const times: string[] = [];
        for (const instance of timed(packed.instance, length)) {
          const p = instance === packed.instance ? packed : repackDsaTopk(packed, instance, rowCount);
          const kernel = await buildKernel(instance);
          times.push(`${instance.name} ${medianUs(device, kernel, p).toFixed(1)}`);
        }
        lines.push(`rows ${String(rowCount).padStart(3)} × L ${String(length).padStart(6)} (µs): ${times.join(' | ')}`);
      } finally {
        mem.dispose();
      }
    }
  }
  console.log(
    `dsa top-k (${buildKernel.builds().length} kernels built), normal logits, no lengths, medians of back-to-back launches; ` +
      `the dispatched instance first:\n  ${lines.join('\n  ')}`,
  );
});
