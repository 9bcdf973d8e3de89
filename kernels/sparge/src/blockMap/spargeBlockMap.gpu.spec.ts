// End-to-end GPU tests of the block-map prediction (node:test; run by the lead on the H200):
// fp16 Q/K from spargeSyntheticInputs through SpargeBlockMapKernels (K mean, pooling, selection on
// one stream) against spargeBlockMapReference (float64). Rows may differ only where a selection
// margin, or a block similarity's distance to simthreshd1, is within fp32 rounding (counted).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeArray, encodeArray } from '@tilekit/numeric';
import { Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { spargeBlockMapReference } from '../spargeBlockMapReference.ts';
import type { SpargeParams } from '../spargeHyperparameters.ts';
import { spargeSyntheticInputs } from '../spargeSyntheticInputs.ts';
import { spargeRandomValues } from '../testing/spargeRandomValues.ts';
import { SpargeBlockMapKernels } from './spargeBlockMapKernels.ts';
import { compareSpargeSelect } from './spargeSelectCompare.ts';
import { spargeSelectReference } from './spargeSelectReference.ts';

let kernels: Promise<SpargeBlockMapKernels> | undefined;
const build = (): Promise<SpargeBlockMapKernels> =>
  (kernels ??= SpargeBlockMapKernels.build({
    device: Device.open(0),
    compiler: gpuTestCompiler('sparge-block-map-gpu'),
    dtypes: ['fp16'],
  }));

interface Case {
  readonly label: string;
  readonly shape: {
    readonly batch: number;
    readonly nhead: number;
    readonly nheadK: number;
    readonly seqlenQ: number;
    readonly seqlenK: number;
    readonly headDim: number;
  };
  readonly params: SpargeParams;
}

const cases: readonly Case[] = [
  {
    label: 'topk 0.3, causal, sink, 128×64, d128, b2 h4 hk2 s1000',
    shape: { batch: 2, nhead: 4, nheadK: 2, seqlenQ: 1000, seqlenK: 1000, headDim: 128 },
    params: { topk: [0.3, 0.5, 0.2, 0.4], isCausal: true, attentionSink: true },
  },
  {
    label: 'cdf per head, simthreshd1 0.5, no sink, 64×128, d64, b1 h2 sq777 sk1500',
    shape: { batch: 1, nhead: 2, nheadK: 2, seqlenQ: 777, seqlenK: 1500, headDim: 64 },
    params: { cdfthreshd: [0.6, 0.9], simthreshd1: 0.5, blockQ: 64, blockK: 128, attentionSink: false },
  },
  {
    label: 'cdf 0.95, smoothK off, causal, 128×128, d128, b1 h2 s4096',
    shape: { batch: 1, nhead: 2, nheadK: 2, seqlenQ: 4096, seqlenK: 4096, headDim: 128 },
    params: { cdfthreshd: 0.95, simthreshd1: 0.2, blockK: 128, smoothK: false, isCausal: true },
  },
];

for (const c of cases) {
  test(`kernel-sparge/gpu block map: ${c.label}`, gpu.options, async () => {
    const device = Device.open(0);
    // Structured inputs need self-attention without GQA; the other shapes take seeded uniform values (rounded to fp16).
    const selfAttention = c.shape.seqlenQ === c.shape.seqlenK && c.shape.nheadK === c.shape.nhead;
    const uniform = (count: number, seed: number): Float32Array =>
      Float32Array.from(decodeArray('fp16', encodeArray('fp16', spargeRandomValues(count, seed))));
    const inputs = selfAttention
      ? spargeSyntheticInputs(c.shape, { seed: 7 })
      : {
          q: uniform(c.shape.batch * c.shape.nhead * c.shape.seqlenQ * c.shape.headDim, 7),
          k: uniform(c.shape.batch * c.shape.nheadK * c.shape.seqlenK * c.shape.headDim, 8),
        };
    const ref = spargeBlockMapReference({ shape: c.shape, q: inputs.q, k: inputs.k, params: c.params });
    const { batch, nhead, headDim } = c.shape;
    const { qBlocks: QM, kBlocks: KM } = ref.blockMap;
    const bufs = {
      q: device.upload(encodeArray('fp16', inputs.q)),
      k: device.upload(encodeArray('fp16', inputs.k)),
      blockMap: device.alloc(batch * nhead * QM * KM).fill(0xa5),
      lut: device.alloc(batch * nhead * QM * KM * 4).fill(0xa5),
      validBlockNum: device.alloc(batch * nhead * QM * 4).fill(0xa5),
      visited: device.alloc(batch * nhead * 4).fill(0xa5),
    };
    const all = await build();
    const run = all.prepare(
      {
        dtype: 'fp16',
        batch,
        nhead,
        nheadK: c.shape.nheadK,
        headDim,
        seqlenQ: c.shape.seqlenQ,
        seqlenK: c.shape.seqlenK,
        params: c.params,
      },
      bufs,
    );
    try {
      run.launch();
      device.synchronize();
      const host = {
        map: new Uint8Array(batch * nhead * QM * KM),
        lut: new Int32Array(batch * nhead * QM * KM),
        validBlockNum: new Int32Array(batch * nhead * QM),
        visited: new Int32Array(batch * nhead),
      };
      bufs.blockMap.copyToHost(host.map);
      bufs.lut.copyToHost(host.lut);
      bufs.validBlockNum.copyToHost(host.validBlockNum);
      bufs.visited.copyToHost(host.visited);
      const p = ref.params;
      const sel = spargeSelectReference(
        {
          batch,
          nhead,
          nheadK: c.shape.nheadK,
          headDim,
          blockQ: p.blockQ,
          blockK: p.blockK,
          seqlenQ: c.shape.seqlenQ,
          seqlenK: c.shape.seqlenK,
          selection: p.selection,
          selectionValue: p.selectionValue,
          simthreshd1: p.simthreshd1,
          isCausal: p.isCausal,
          attentionSink: p.attentionSink,
        },
        { pooledQ: ref.pooledQ, simQ: ref.similarityQ, pooledK: ref.pooledK, simK: ref.similarityK },
      );
      assert.deepEqual(sel.map, ref.blockMap.map, 'the selection reference reproduces the block-map reference');
      // A block whose similarity is within fp32 rounding of θ may be judged either way on the GPU.
      const near = (s: number, theta: number): boolean => Math.abs(s - theta) < 1e-5;
      const ratio = nhead / c.shape.nheadK;
      const excuseRow = (row: number): boolean => {
        const bh = Math.floor(row / QM);
        const h = bh % nhead;
        const bhk = Math.floor(bh / nhead) * c.shape.nheadK + Math.floor(h / ratio);
        const theta = p.simthreshd1[h]!;
        if (near(ref.similarityQ[row]!, theta)) return true;
        for (let j = 0; j < KM; j++) if (near(ref.similarityK[bhk * KM + j]!, theta)) return true;
        return false;
      };
      const verdict = compareSpargeSelect(sel, host, { excuseRow });
      assert.equal(verdict.wrong, 0, `${c.label}: ${verdict.wrong}/${verdict.rows} rows wrong; first: ${verdict.first}`);
      const visited = host.visited.reduce((s, v) => s + v, 0);
      console.log(
        `${c.label}: ${verdict.rows} rows, ${verdict.excused} within rounding; GPU visits ${visited} blocks, CPU sparsity ${ref.achievedSparsity.toFixed(3)}`,
      );
    } finally {
      device.synchronize();
      run.dispose();
      for (const b of Object.values(bufs)) b.dispose();
    }
  });
}
