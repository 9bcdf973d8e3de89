// The argument layout equals what nvcc gives the driver: random signatures are emitted as entry
// points (one translation unit per target), compiled to cubins, and every parameter's offset and
// size is read from the cubin's `.nv.info.<kernel>` section (`cubinKernelParams`: EIATTR_KPARAM_INFO
// records), which is what cuFuncGetParamInfo reports at run time and what the runtime checks launches with. No GPU needed; skipped LOUDLY without nvcc.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SourceBuilder } from '../sourceBuilder.ts';
import { sm80, sm90a } from '../cudaTarget.ts';
import { toolAvailable } from '../testing/compileAndRunHost.ts';
import { cubinKernelParams } from './cubinKernelParams.ts';
import { KernelSignature } from './kernelSignature.ts';
import { kernelParamsArbitrary } from './testing/kernelSignatureArbitrary.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc) console.warn(`\n!!! SKIPPING the argument-layout nvcc test: "${nvcc}" not found (set TILEKIT_NVCC). !!!\n`);

describe.runIf(hasNvcc)('argument layout == nvcc (cubin EIATTR_KPARAM_INFO)', () => {
  for (const target of [sm90a, sm80]) {
    it(`${target.name}: 40 random signatures, every offset and size`, () => {
      const samples = fc.sample(kernelParamsArbitrary({ maxParams: 14 }), { numRuns: 40, seed: target === sm90a ? 90 : 80 });
      const src = new SourceBuilder({ dialect: target });
      const signatures = samples.map((params, i) => new KernelSignature(`k${i}`, target, params));
      for (const sig of signatures) sig.defineEntry(src, {}, () => {});
      const dir = mkdtempSync(join(tmpdir(), 'tilekit-kparam-'));
      try {
        writeFileSync(join(dir, 'k.cu'), src.render());
        const run = spawnSync(nvcc, ['-cubin', `-arch=${target.arch as string}`, '-o', join(dir, 'k.cubin'), join(dir, 'k.cu')], {
          encoding: 'utf8',
          timeout: 300_000,
        });
        expect(run.status, `${run.stderr}\n${src.render()}`).toBe(0);
        const cubin = new Uint8Array(readFileSync(join(dir, 'k.cubin')));
        for (const sig of signatures) {
          const got = cubinKernelParams(cubin, sig.name) ?? [];
          expect(
            got.map((p) => [p.offset, p.size]),
            `${sig.name}(${sig.layout.fields.map((f) => (f.param.kind === 'scalar' ? f.param.scalar : f.param.kind)).join(', ')})`,
          ).toEqual(sig.layout.fields.map((f) => [f.offset, f.size]));
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
