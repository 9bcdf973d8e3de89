// GPU tests of the two-read top-k instance (DsaTopkTwoReadInstance; node:test, run by `npm run
// test:gpu`): it is launched EXPLICITLY (dsaTopkTwoReadInstanceFor with packDsaTopk's arguments
// repacked), so that every case runs it, not only those the launcher's dispatch gives it (dsaTopkPrefersTwoRead).
// Every case of the top-k spec (dsaTopkGpuCases) and the two-read boundary rows (dsaTopkTwoReadCases:
// a list exactly full and one past, ties inside the list, pass 2 deciding, an early-stopping sweep,
// k 4096 with a length) must equal dsaTopkReference bit for bit. Then prints the times (not asserted)
// at k 2048 of rows 128 × 131072, 32 × 131072, 128 × 32768: the dispatched instance, the single-CTA
// kernel, the two-read instance and the cluster kernel the cluster rule gives (where it gives one). Skipped without a GPU.
import { test } from 'node:test';
import { buildOncePerInstance, Device, timeBackToBack } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { DsaKernel } from '../dsaKernel.ts';
import type { DsaTopkRows } from '../reference/dsaTopkReference.ts';
import { dsaTopkGpuCases, dsaTopkGpuPageTable } from '../testing/dsaTopkGpuCases.ts';
import { dsaTopkLogits } from '../testing/dsaTopkLogits.ts';
import { DsaTopkCaseBuffers, repackDsaTopk, runDsaTopkGpuRows } from '../testing/dsaTopkGpuRun.ts';
import { dsaTopkTwoReadCases } from '../testing/dsaTopkTwoReadCases.ts';
import { dsaTopkClusterInstanceFor, dsaTopkClusterSizeFor, dsaTopkInstanceFor, dsaTopkVectorFor } from './dsaTopkCatalog.ts';
import {
  checkDsaTopkConfig,
  packDsaTopk,
  type DsaTopkAnyInstance,
  type DsaTopkKernel,
  type DsaTopkPackedLaunch,
} from './dsaTopkLauncher.ts';
import type { DsaTopkPageTable } from './dsaTopkOutput.ts';
import { DSA_TOPK_TWO_READ_LIST_CAPACITY, dsaTopkTwoReadInstanceFor } from './dsaTopkTwoReadCatalog.ts';

const buildKernel = buildOncePerInstance((instance: DsaTopkAnyInstance) =>
  DsaKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('dsa-topk-two-read-gpu') }),
);

/** One case: its rows, the page table of the page-table form, and where the logits start. */
interface TwoReadCase {
  readonly label: string;
  readonly rows: () => DsaTopkRows;
  readonly table?: () => DsaTopkPageTable;
  readonly logitsOffset?: number;
}

/** The two-read instance for the form and load width of the dispatched launch. */
const twoReadFor = (p: DsaTopkPackedLaunch): DsaTopkAnyInstance =>
  dsaTopkTwoReadInstanceFor(p.instance.policy.output.kind, p.instance.policy.vector);

async function runCase(c: TwoReadCase): Promise<string> {
  const rows = { label: c.label, rows: c.rows(), table: c.table?.(), logitsOffset: c.logitsOffset };
  return runDsaTopkGpuRows(rows, buildKernel, twoReadFor);
}

const cases: TwoReadCase[] = [
  ...dsaTopkTwoReadCases(DSA_TOPK_TWO_READ_LIST_CAPACITY).map((c) => ({ label: `boundary: ${c.label}`, rows: c.rows })),
  ...dsaTopkGpuCases().map((c) => ({
    label: c.label,
    rows: () => dsaTopkLogits(c.logits),
    ...(c.rowsPerSequence === undefined ? {} : { table: () => dsaTopkGpuPageTable(c) }),
    ...(c.logitsOffset === undefined ? {} : { logitsOffset: c.logitsOffset }),
  })),
];
for (const c of cases) {
  test(`kernel-dsa/gpu topk two-read: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}

/** The median per-launch time (µs) of back-to-back launches. */
function medianUs(device: Device, kernel: DsaTopkKernel, packed: DsaTopkPackedLaunch): number {
  const options = { warmup: 3, warmupMs: 20, repetitions: 5, targetMs: 10, minLaunches: 20, maxLaunches: 4000 };
  const { reps } = timeBackToBack(device, () => kernel.launch(packed), options);
  return [...reps].sort((x, y) => x - y)[2]! * 1000;
}

test('kernel-dsa/gpu topk two-read: time at k 2048, 128 × 128K, 32 × 128K, 128 × 32K (printed, not asserted)', gpu.options, async () => {
  const device = Device.open(0);
  const lines: string[] = [];
  for (const [rowCount, length] of [
    [128, 131072],
    [32, 131072],
    [128, 32768],
  ] as const) {
    const rows = dsaTopkLogits({ seed: 99, rows: rowCount, rowStride: length, k: 2048, style: 'normal' });
    const mem = new DsaTopkCaseBuffers(device);
    try {
      const config = checkDsaTopkConfig({ rows: rowCount, rowStride: length, k: 2048 });
      const packed = packDsaTopk(config, { logits: mem.upload(rows.logits), out: mem.output(rowCount * 2048 * 4) });
      const single = dsaTopkInstanceFor('index', dsaTopkVectorFor(length, 0n));
      const cluster = dsaTopkClusterSizeFor(rowCount, length);
      const clustered = cluster === undefined ? [] : [dsaTopkClusterInstanceFor('index', single.policy.vector, cluster)];
      const all = [packed.instance, single, twoReadFor(packed), ...clustered];
      const times: string[] = [];
      for (const instance of all.filter((x, i) => all.findIndex((y) => y.name === x.name) === i)) {
        const p = instance === packed.instance ? packed : repackDsaTopk(packed, instance, rowCount);
        times.push(`${instance.name} ${medianUs(device, await buildKernel(instance), p).toFixed(1)}`);
      }
      lines.push(`rows ${String(rowCount).padStart(3)} × L ${String(length).padStart(6)} (µs): ${times.join(' | ')}`);
    } finally {
      mem.dispose();
    }
  }
  console.log(
    `dsa top-k two-read, normal logits, medians of back-to-back launches; the dispatched instance first:\n  ${lines.join('\n  ')}`,
  );
});
