// GPU tests of the block-map selection kernel (node:test; run by the lead on the H200): pooled
// inputs computed by the CPU (spargePoolBlocks, rounded to fp32) go through the kernel, and its map,
// LUT, counts and per-(b, h) visited counts are compared with spargeSelectReference. Rows may
// differ only where the CPU margins are within fp32 rounding (counted and printed). Covers topk and
// cdf, causal, sink on/off, fix blocks, per-head values, partial tails, GQA, group mode, kBlocks
// 1…4096, score ties; prints the kernel time at s = 16k and 64k. Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOncePerInstance, Device, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { spargeRandomValues } from '../testing/spargeRandomValues.ts';
import { compareSpargeSelect } from './spargeSelectCompare.ts';
import type { SpargeSelectInstance } from './spargeSelectInstance.ts';
import {
  checkSpargeSelectConfig,
  packSpargeSelect,
  spargeSelectBufferBytes,
  SpargeSelectKernel,
  type SpargeSelectBuffers,
} from './spargeSelectLauncher.ts';
import { spargeSelectReference, type SpargeSelectInputs, type SpargeSelectProblem } from './spargeSelectReference.ts';
import { spargeSelectTestInputs } from './spargeSelectTestInputs.ts';

const buildKernel = buildOncePerInstance((instance: SpargeSelectInstance) =>
  SpargeSelectKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('sparge-select-gpu') }),
);

interface Case {
  readonly label: string;
  readonly problem: SpargeSelectProblem;
  readonly duplicateKeyBlocks?: boolean;
  /** Random pooled vectors instead of pooled structured Q/K (large shapes). */
  readonly randomPooled?: boolean;
  /** Print the kernel time (CUDA events, 20 launches after 5). */
  readonly time?: boolean;
  /** Skip the CPU comparison (timing-only shapes). */
  readonly timeOnly?: boolean;
}

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

function randomPooled(p: SpargeSelectProblem, seed: number): SpargeSelectInputs {
  const { qBlocksMax: QM, kBlocksMax: KM } = checkSpargeSelectConfig(p).grid;
  const f32 = (x: Float64Array): Float32Array => Float32Array.from(x);
  const sims = (n: number, s: number): Float32Array => f32(spargeRandomValues(n, s).map((v) => Math.abs(v)));
  return {
    pooledQ: f32(spargeRandomValues(p.batch * p.nhead * QM * p.headDim, seed, 2)),
    simQ: sims(p.batch * p.nhead * QM, seed + 1),
    pooledK: f32(spargeRandomValues(p.batch * p.nheadK * KM * p.headDim, seed + 2, 2)),
    simK: sims(p.batch * p.nheadK * KM, seed + 3),
  };
}

async function runCase(c: Case): Promise<string> {
  const p = c.problem;
  const config = checkSpargeSelectConfig(p);
  const inputs =
    c.randomPooled === true
      ? randomPooled(p, 11)
      : spargeSelectTestInputs(p, { seed: 5, ...(c.duplicateKeyBlocks === true ? { duplicateKeyBlocks: true } : {}) });
  const device = Device.open(0);
  const bytes = spargeSelectBufferBytes(config);
  const owned: DeviceBuffer[] = [];
  const up = (x: ArrayBufferView): DeviceBuffer => {
    const b = device.upload(x);
    owned.push(b);
    return b;
  };
  const alloc = (n: number): DeviceBuffer => {
    const b = device.alloc(Math.max(1, n)).fill(0xa5);
    owned.push(b);
    return b;
  };
  try {
    const out = {
      blockMap: alloc(bytes.blockMap),
      lut: alloc(bytes.lut),
      validBlockNum: alloc(bytes.validBlockNum),
      visited: alloc(bytes.visited).fill(0),
    };
    const buffers: SpargeSelectBuffers = {
      pooledQ: up(Float32Array.from(inputs.pooledQ)),
      simQ: up(Float32Array.from(inputs.simQ)),
      pooledK: up(Float32Array.from(inputs.pooledK)),
      simK: up(Float32Array.from(inputs.simK)),
      simthreshd1: up(Float64Array.from(p.simthreshd1)),
      selectionValue: up(Float64Array.from(p.selectionValue)),
      ...out,
      ...(config.groupMode ? { seqstartQ: up(new Int32Array(p.seqstartQ!)), seqstartK: up(new Int32Array(p.seqstartK!)) } : {}),
    };
    const packed = packSpargeSelect(config, buffers);
    const kernel = await buildKernel(packed.instance);
    kernel.launch(packed);
    device.synchronize();
    let note = `${packed.instance.name}, grid ${packed.grid.join('×')}, ${packed.sharedBytes} B smem, ${kernel.compiled.resources.registers} regs`;
    if (c.timeOnly !== true) {
      const host = {
        map: new Uint8Array(bytes.blockMap),
        lut: new Int32Array(bytes.lut / 4),
        validBlockNum: new Int32Array(bytes.validBlockNum / 4),
        visited: new Int32Array(bytes.visited / 4),
      };
      out.blockMap.copyToHost(host.map);
      out.lut.copyToHost(host.lut);
      out.validBlockNum.copyToHost(host.validBlockNum);
      out.visited.copyToHost(host.visited);
      const ref = spargeSelectReference(p, inputs);
      const verdict = compareSpargeSelect(ref, host);
      assert.equal(verdict.wrong, 0, `${c.label}: ${verdict.wrong}/${verdict.rows} rows wrong; first: ${verdict.first}`);
      const visited = host.visited.reduce((s, v) => s + v, 0);
      note += `; ${verdict.rows} rows equal but ${verdict.excused} within rounding margins; ${visited} blocks visited`;
    }
    if (c.time === true) {
      const ms = timeLaunches(device, () => kernel.launch(packed), { warmup: 5, repeat: 20 }).sort((x, y) => x - y);
      note += `; median ${(ms[10]! * 1000).toFixed(1)} µs`;
    }
    return note;
  } finally {
    device.synchronize();
    for (const b of owned) b.dispose();
  }
}

const base = { batch: 1, nhead: 2, nheadK: 2, headDim: 128, blockQ: 128, blockK: 64, isCausal: false, attentionSink: true } as const;

const cases: readonly Case[] = [
  {
    label: 'topk per head, causal, sink, fix blocks, ties, partial tails (s1000, 128×64, d128)',
    duplicateKeyBlocks: true,
    problem: {
      ...base,
      seqlenQ: 1000,
      seqlenK: 1000,
      selection: 'topk',
      selectionValue: [0.3, 0.55],
      simthreshd1: [0.35, -0.1],
      isCausal: true,
    },
  },
  {
    label: 'cdf per head, no sink, GQA 4:2, d64, 64×128, sq 777 < sk 1500',
    duplicateKeyBlocks: true,
    problem: {
      ...base,
      nhead: 4,
      nheadK: 2,
      headDim: 64,
      blockQ: 64,
      blockK: 128,
      seqlenQ: 777,
      seqlenK: 1500,
      selection: 'cdf',
      selectionValue: [0.2, 0.5, 0.9, 1],
      simthreshd1: [0.3, 0.5, -1, 0.2],
      attentionSink: false,
    },
  },
  {
    label: 'cdf causal sink, b2 h2 s2048 128×128 d128, no fix blocks',
    problem: {
      ...base,
      batch: 2,
      blockK: 128,
      seqlenQ: 2048,
      seqlenK: 2048,
      selection: 'cdf',
      selectionValue: [0.7, 0.95],
      simthreshd1: [-1, -1],
      isCausal: true,
    },
  },
  {
    label: 'topk 1.0 and tiny (n promoted to 1), sink off, kBlocks 1 (sk 10)',
    problem: {
      ...base,
      seqlenQ: 300,
      seqlenK: 10,
      selection: 'topk',
      selectionValue: [1, 0.01],
      simthreshd1: [-1, 0.5],
      attentionSink: false,
    },
  },
  {
    label: 'group mode varlen q 300,0,129,64 k 200,64,0,1000, GQA 4:1, causal, cdf',
    duplicateKeyBlocks: true,
    problem: {
      ...base,
      batch: 4,
      nhead: 4,
      nheadK: 1,
      headDim: 64,
      blockK: 64,
      seqstartQ: starts([300, 0, 129, 64]),
      seqstartK: starts([200, 64, 0, 1000]),
      selection: 'cdf',
      selectionValue: [0.5, 0.8, 0.3, 1],
      simthreshd1: [0.3, -0.1, 0.6, 0.1],
      isCausal: true,
    },
  },
  {
    label: 'group mode varlen topk, sink off, k 1,65,640',
    problem: {
      ...base,
      batch: 3,
      seqstartQ: starts([1, 200, 640]),
      seqstartK: starts([1, 65, 640]),
      selection: 'topk',
      selectionValue: [0.25, 0.5],
      simthreshd1: [0.4, -0.1],
    },
  },
  {
    label: 'kBlocks 2048 (sk 131072 / 64), topk, d64',
    randomPooled: true,
    problem: {
      ...base,
      headDim: 64,
      seqlenQ: 1024,
      seqlenK: 131072,
      selection: 'topk',
      selectionValue: [0.1, 0.02],
      simthreshd1: [0.2, -1],
    },
  },
  {
    label: 'kBlocks 4096 (the cap; sk 262144 / 64), cdf, d64',
    randomPooled: true,
    problem: { ...base, headDim: 64, seqlenQ: 384, seqlenK: 262144, selection: 'cdf', selectionValue: [0.5, 0.9], simthreshd1: [0.2, -1] },
  },
  {
    label: 'perf b2 h16 s16384 128×128 d128 topk (128 rows of 128 candidates per head)',
    randomPooled: true,
    time: true,
    problem: {
      ...base,
      batch: 2,
      nhead: 16,
      nheadK: 16,
      blockK: 128,
      seqlenQ: 16384,
      seqlenK: 16384,
      selection: 'topk',
      selectionValue: Array(16).fill(0.3),
      simthreshd1: Array(16).fill(-0.1),
    },
  },
  {
    label: 'perf b2 h16 s16384 128×128 d128 cdf causal',
    randomPooled: true,
    time: true,
    problem: {
      ...base,
      batch: 2,
      nhead: 16,
      nheadK: 16,
      blockK: 128,
      seqlenQ: 16384,
      seqlenK: 16384,
      selection: 'cdf',
      selectionValue: Array(16).fill(0.9),
      simthreshd1: Array(16).fill(0.3),
      isCausal: true,
    },
  },
  {
    label: 'perf b2 h16 s65536 128×128 d128 topk (512 key blocks), timing only',
    randomPooled: true,
    time: true,
    timeOnly: true,
    problem: {
      ...base,
      batch: 2,
      nhead: 16,
      nheadK: 16,
      blockK: 128,
      seqlenQ: 65536,
      seqlenK: 65536,
      selection: 'topk',
      selectionValue: Array(16).fill(0.3),
      simthreshd1: Array(16).fill(-0.1),
    },
  },
  {
    label: 'perf b2 h16 s65536 128×128 d128 cdf, timing only',
    randomPooled: true,
    time: true,
    timeOnly: true,
    problem: {
      ...base,
      batch: 2,
      nhead: 16,
      nheadK: 16,
      blockK: 128,
      seqlenQ: 65536,
      seqlenK: 65536,
      selection: 'cdf',
      selectionValue: Array(16).fill(0.9),
      simthreshd1: Array(16).fill(-0.1),
    },
  },
];

for (const c of cases) {
  test(`kernel-sparge/gpu select: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}
