// GPU tests of the DSA prefill path (node:test; run on the GPU machine): indexer → top-k token indices → sparse MLA
// prefill, packed by packDsaPrefillStep and enqueued by DsaLaunchSequence, on small ragged chunks (causal and random
// windows with empty ones, h_q 64 and 128, sinks, top-k past the window), each checked stage by stage against the CPU
// references of the whole path (checkDsaPrefillStepOutputs). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '@tilekit/host';
import { Device, encodeTensorMapTiled, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler, OwnedBuffers } from '@tilekit/runtime/testing';
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { dsaBf16Bits } from '../reference/dsaBf16Bits.ts';
import { checkDsaPrefillStepOutputs } from '../testing/checkDsaPrefillStepOutputs.ts';
import { dsaRandomPrefillStepInput, type DsaRandomPrefillStepOptions } from '../testing/dsaRandomPrefillStep.ts';
import { DsaLaunchSequence } from './dsaLaunchSequence.ts';
import { checkDsaPrefillStepConfig, dsaPrefillStepWorkspaceBytes, packDsaPrefillStep } from './dsaPrefillStep.ts';

const compiler = gpuTestCompiler('dsa-prefill-step-gpu');

const CASES: readonly (readonly [string, DsaRandomPrefillStepOptions])[] = [
  ['s 8 over 300, causal, h_q 128, top-256, sinks', { seqQ: 8, seqKv: 300, indexHeads: 64, hQ: 128, topk: 256, sink: true }],
  ['s 17 over 1000, random windows, h_q 64, top-512', { seqQ: 17, seqKv: 1000, indexHeads: 32, hQ: 64, topk: 512, windows: 'random' }],
];

CASES.forEach(([label, o], i) => {
  test(`kernel-dsa/gpu prefill step: ${label}`, gpu.options, async () => {
    const x = dsaRandomPrefillStepInput(o, new Prng(0x5d_0001 + i));
    const device = Device.open(0);
    const owned = new OwnedBuffers(device);
    const up = (v: ArrayBufferView): DeviceBuffer => owned.upload(v);
    const alloc = (bytes: number): DeviceBuffer => owned.alloc(bytes, { fill: 0xa5 });
    try {
      const c = checkDsaPrefillStepConfig({ ...o, smScale: x.smScale, hasSink: x.attnSink !== undefined });
      const rows = o.seqQ * o.hQ;
      const buffers = {
        indexQ: up(x.index.q),
        indexWeights: up(x.index.weights),
        indexK: up(x.index.k),
        indexKScales: up(x.index.kScales),
        windowStart: up(x.index.windowStart),
        windowEnd: up(x.index.windowEnd),
        q: up(dsaBf16Bits(x.q)),
        kv: up(dsaBf16Bits(x.kv)),
        attnSink: x.attnSink === undefined ? undefined : up(x.attnSink),
        out: alloc(rows * DSA_SPARSE_MLA_V_DIM * 2),
        lse: alloc(rows * 4),
        maxLogits: alloc(rows * 4),
        workspace: alloc(dsaPrefillStepWorkspaceBytes(c)),
      };
      const packed = packDsaPrefillStep(c, buffers, { encode: (m) => encodeTensorMapTiled(device, m) });
      const seq = await DsaLaunchSequence.build(packed.launches, { device, compiler });
      seq.launch();
      device.synchronize();
      const at = (p: bigint): { offset: number } => ({ offset: Number(p - buffers.workspace.ptr) });
      const got = {
        logits: buffers.workspace.copyToHost(new Float32Array(o.seqQ * o.seqKv), at(packed.logits.ptr)),
        indices: buffers.workspace.copyToHost(new Int32Array(o.seqQ * o.topk), at(packed.indices.ptr)),
        out: buffers.out.copyToHost(new Uint16Array(rows * DSA_SPARSE_MLA_V_DIM)),
        lse: buffers.lse.copyToHost(new Float32Array(rows)),
        maxLogits: buffers.maxLogits.copyToHost(new Float32Array(rows)),
      };
      const verdict = checkDsaPrefillStepOutputs(x, got);
      assert.ok(verdict.ok, `${label}: ${verdict.lines.join('; ')}`);
      console.log(`  ${packed.launches.map((l) => l.instance.name).join(' → ')}: ${verdict.lines.join('; ')}`);
      seq.dispose();
    } finally {
      device.synchronize();
      owned.dispose();
    }
  });
});
