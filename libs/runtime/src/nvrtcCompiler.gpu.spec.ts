import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CompileError } from './compileError.ts';
import { kernelArgs } from './kernelArgs.ts';
import { NvrtcCompiler } from './nvrtcCompiler.ts';
import { gpu, thrown } from './testing/gpu.ts';
import { AXPY_SOURCE, SYNTAX_ERROR_SOURCE } from './testing/kernelSources.ts';

const options = gpu.options.skip !== undefined ? gpu.options : gpu.probe.nvrtc ? {} : { skip: `no NVRTC: ${gpu.probe.nvrtcReason}` };
const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-nvrtc-tests-'));

test('runtime/gpu: NVRTC compiles to a cubin for the device arch, with PTX, and it runs', options, async (t) => {
  const device = gpu.device();
  const compiler = new NvrtcCompiler({ cacheDir });
  t.diagnostic(`${await compiler.version()} from ${gpu.probe.libnvrtc}`);
  const result = await compiler.compile({ source: AXPY_SOURCE, name: 'axpy', arch: device });
  t.diagnostic(`nvrtc resources (reported: ${result.resourcesReported}): ${JSON.stringify(result.resources)}`);
  t.diagnostic(`nvrtc log: ${JSON.stringify(result.log.slice(0, 600))}`);
  assert.equal(result.arch, device.arch);
  assert.deepEqual([...result.cubin.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
  assert.match(result.ptx ?? '', new RegExp(`\\.target ${device.arch}`));
  assert.equal(readFileSync(result.sourcePath, 'utf8'), AXPY_SOURCE);
  const kernel = device.loadModule(result.cubin).getKernel('axpy');
  if (result.resourcesReported) assert.equal(result.resources.registers, kernel.attributes.numRegs);
  const n = 513;
  const x = Float32Array.from({ length: n }, (_, i) => i);
  const dx = device.upload(x);
  const dy = device.alloc(n * 4).fill(0);
  kernel.launch(
    { grid: 3, block: 256 },
    kernelArgs((b) => b.f32(4).pointer(dx).pointer(dy).i32(n)),
  );
  const out = dy.copyToHost(new Float32Array(n));
  for (let i = 0; i < n; i += 1) assert.equal(out[i], 4 * i);
  dx.dispose();
  dy.dispose();
  const again = await new NvrtcCompiler({ cacheDir }).compile({ source: AXPY_SOURCE, name: 'axpy', arch: device });
  assert.equal(again.cached, true);
  assert.deepEqual(again.cubin, result.cubin);
});

test('runtime/gpu: NVRTC syntax errors raise CompileError with file:line', options, async () => {
  const compiler = new NvrtcCompiler({ cacheDir });
  const error = await thrown(() => compiler.compile({ source: SYNTAX_ERROR_SOURCE, name: 'broken', arch: gpu.device() }));
  assert.ok(error instanceof CompileError, String(error));
  assert.ok(existsSync(error.sourcePath));
  assert.match(error.message, new RegExp(`${error.sourcePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: error`));
  assert.match(error.log, /kernel\.cu\(3\): error/);
});
