// End-to-end GPU tests of example_sparge (node:test; run by the lead on the H200): the example
// compiles its kernels, runs the block map and the sparse attention, validates both stages against
// the CPU references (-v=1) and times them; each run must exit 0 and print the timing, sparsity
// and validation lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gpu } from '@tilekit/runtime/testing';
import { runSpargeExample, spargeParser } from './spargeExample.ts';

const cases: readonly (readonly string[])[] = [
  ['-s=1024', '-h=2', '-d=128', '-v=1', '-print_sparsity=1', '-warmup=2', '-repeat=5'],
  [
    '-pipeline=jenga',
    '-prec=bf16',
    '-s=1000',
    '-h=3',
    '-d=64',
    '-causal=1',
    '-topk=0.3,0.5,0.2',
    '-pv_mode=block',
    '-pv_threshold=6',
    '-v=1',
    '-warmup=1',
    '-repeat=3',
  ],
  [
    '-s=768',
    '-h=2',
    '-d=128',
    '-cdfthreshd=0.7,0.95',
    '-pv_mode=warp',
    '-pv_threshold=8',
    '-int8=1',
    '-v=1',
    '-print_sparsity=1',
    '-warmup=1',
    '-repeat=3',
  ],
  ['-s=640', '-s_k=900', '-h=4', '-h_k=2', '-d=64', '-inputs=uniform', '-sink=0', '-smooth_k=0', '-v=1', '-warmup=1', '-repeat=3'],
];

for (const argv of cases) {
  test(`example-sparge/gpu: ${argv.join(' ')}`, gpu.options, async () => {
    const lines: string[] = [];
    const code = await runSpargeExample(spargeParser.parse([...argv]), (l) => lines.push(l));
    const out = lines.join('\n');
    console.log(out);
    assert.equal(code, 0, out);
    assert.match(out, /block map [\d.]+ ms, attention [\d.]+ ms \(median of \d+ after \d+ warmup\)/);
    assert.match(out, /dense-equivalent [\d.]+ TFLOP.*: attention [\d.]+ TFLOP\/s/);
    assert.match(out, /achieved sparsity \(GPU\): [\d.]+/);
    assert.match(out, /block map: \d+ query-block rows, \d+ differ within rounding of a threshold, 0 wrong/);
    assert.match(out, /O\/LSE: .* 0 outside/);
    assert.match(out, /valid: yes/);
    if (argv.some((a) => a.startsWith('-pv_mode=') && a !== '-pv_mode=none'))
      assert.match(out, /PV skip \((warp|block)\): \d+ P·V tiles computed, \d+ skipped/);
    if (argv.includes('-print_sparsity=1')) assert.match(out, /achieved sparsity \(GPU block map\): [\d.]+\n {2}per head:/);
  });
}
