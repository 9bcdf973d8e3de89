import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArgumentError } from '@tilekit/numeric';
import { loadAddon } from './addon.ts';
import { CudaError } from './cudaError.ts';
import { kernelArgs } from './kernelArgs.ts';
import { gpu, thrown } from './testing/gpu.ts';
import { AXPY_SOURCE, CLUSTER_RANK_SOURCE, DYNAMIC_SMEM_SOURCE } from './testing/kernelSources.ts';

test('runtime/gpu: an nvcc-compiled kernel launches and computes y = a*x + y (odd n)', gpu.options, async () => {
  const device = gpu.device();
  const kernel = await gpu.kernel(AXPY_SOURCE, 'axpy');
  for (const n of [1, 3, 4097]) {
    const x = Float32Array.from({ length: n }, (_, i) => i % 1000);
    const y = Float32Array.from({ length: n }, (_, i) => (i * 7) % 1000);
    const dx = device.upload(x);
    const dy = device.upload(y);
    kernel.launch(
      { grid: Math.ceil(n / 256), block: 256 },
      kernelArgs((b) => b.f32(2).pointer(dx).pointer(dy).i32(n)),
    );
    const out = dy.copyToHost(new Float32Array(n));
    for (let i = 0; i < n; i += 1) assert.equal(out[i], 2 * x[i]! + y[i]!, `n=${n} i=${i}`);
    dx.dispose();
    dy.dispose();
  }
});

test('runtime/gpu: kernel attributes come from the driver, the parameter layout from the cubin', gpu.options, async (t) => {
  const { result, module } = await gpu.module(AXPY_SOURCE, 'axpy');
  const kernel = module.getKernel('axpy');
  const attributes = kernel.attributes;
  t.diagnostic(`axpy attributes: ${JSON.stringify(attributes)}; ptxas: ${JSON.stringify(result.resources)}`);
  assert.equal(attributes.numRegs, result.resources.registers);
  assert.equal(attributes.localBytes, 0);
  assert.equal(attributes.staticSharedBytes, 0);
  assert.equal(attributes.maxThreadsPerBlock, 1024);
  assert.equal(attributes.maxDynamicSharedBytes, 48 * 1024);
  if (kernel.params !== undefined) {
    assert.deepEqual(kernel.params, [
      { offset: 0, size: 4 },
      { offset: 8, size: 8 },
      { offset: 16, size: 8 },
      { offset: 24, size: 4 },
    ]);
  } else {
    assert.fail('a cubin records its parameter layout (.nv.info EIATTR_KPARAM_INFO)');
  }
});

test('runtime/gpu: cluster launch through cuLaunchKernelEx', gpu.options, async () => {
  const device = gpu.device();
  if (!device.clusterLaunch) return;
  const kernel = await gpu.kernel(CLUSTER_RANK_SOURCE, 'cluster_rank');
  const out = device.alloc(8 * 4).fill(0xff);
  kernel.launch(
    { grid: 8, block: 32, cluster: [4] },
    kernelArgs((b) => b.pointer(out)),
  );
  assert.deepEqual([...new Uint32Array(out.copyToHost().buffer)], [0, 1, 2, 3, 0, 1, 2, 3]);
  out.dispose();
});

test('runtime/gpu: setMaxDynamicSharedMemory opens dynamic shared memory beyond 48 KiB', gpu.options, async () => {
  const device = gpu.device();
  const kernel = await gpu.kernel(DYNAMIC_SMEM_SOURCE, 'smem_reverse');
  const n = 50 * 1024; // 200 KiB of unsigned
  const input = Uint32Array.from({ length: n }, (_, i) => i * 3 + 1);
  const din = device.upload(input);
  const dout = device.alloc(n * 4);
  const args = kernelArgs((b) => b.pointer(din).pointer(dout).i32(n));
  assert.throws(() => kernel.launch({ grid: 1, block: 1024, sharedBytes: n * 4 }, args), /sharedBytes: must be at most 49152/);
  kernel.setMaxDynamicSharedMemory(n * 4);
  assert.equal(kernel.attributes.maxDynamicSharedBytes, n * 4);
  kernel.launch({ grid: 1, block: 1024, sharedBytes: n * 4 }, args);
  const out = dout.copyToHost(new Uint32Array(n));
  for (let i = 0; i < n; i += 1) assert.equal(out[i], input[n - 1 - i], `out[${i}]`);
  assert.throws(() => kernel.setMaxDynamicSharedMemory(device.sharedMemoryPerBlockOptin + 1), ArgumentError);
  din.dispose();
  dout.dispose();
});

test('runtime/gpu: argument errors are typed and leave the context usable', gpu.options, async () => {
  const device = gpu.device();
  const kernel = await gpu.kernel(AXPY_SOURCE, 'axpy');
  const y = device.alloc(64);
  const good = kernelArgs((b) => b.f32(1).pointer(y).pointer(y).i32(16));
  if (kernel.params !== undefined) {
    const tooFew = kernelArgs((b) => b.f32(1).pointer(y).pointer(y));
    assert.throws(() => kernel.launch({ grid: 1, block: 32 }, tooFew), /args: kernel axpy takes 4 parameters \(got 3\)/);
    const wrongSize = kernelArgs((b) => b.f32(1).pointer(y).pointer(y).u64(16n));
    assert.throws(() => kernel.launch({ grid: 1, block: 32 }, wrongSize), /args\[3\]: kernel axpy parameter 3 is 4 bytes/);
  }
  for (const [config, pattern] of [
    [{ grid: 0, block: 32 }, /grid\.x: must be an integer >= 1/],
    [{ grid: [1, 65_536], block: 32 }, /grid\.y: must be at most 65535/],
    [{ grid: 2 ** 31, block: 32 }, /grid\.x: must be at most 2147483647/],
    [{ grid: 1, block: 2048 }, /block\.x: must be at most 1024/],
    [{ grid: 1, block: [64, 32] }, /block: must have at most 1024 threads/],
  ] as const) {
    const error = await thrown(() => kernel.launch(config, good));
    assert.ok(error instanceof ArgumentError, String(error));
    assert.match(error.message, pattern);
  }
  await gpu.expectUsable();
  y.dispose();
});

test('runtime/gpu: a launch the driver rejects raises CudaError; the context stays usable', gpu.options, async (t) => {
  const kernel = await gpu.kernel(AXPY_SOURCE, 'axpy');
  const y = gpu.device().alloc(64);
  const args = kernelArgs((b) => b.f32(1).pointer(y).pointer(y).i32(16));
  // Straight to the addon, past the TS checks: 2048 threads per block.
  const error = await thrown(() =>
    loadAddon().launchKernel(kernel.handle, [1, 1, 1], [2048, 1, 1], 0, undefined, undefined, args.bytes, args.offsets),
  );
  assert.ok(error instanceof CudaError, String(error));
  t.diagnostic(`driver-rejected launch: ${error.message}`);
  assert.match(error.call, /^cuLaunchKernel(Ex)?$/);
  assert.match(error.cudaName, /^CUDA_ERROR_(INVALID_VALUE|LAUNCH_OUT_OF_RESOURCES)$/);
  assert.match(error.message, /^cuLaunchKernel(Ex)? failed: CUDA_ERROR_\w+ \(\d+\): /);
  await gpu.expectUsable();
  y.dispose();
});

test('runtime/gpu: corrupt images and unknown kernels raise typed errors; the context stays usable', gpu.options, async (t) => {
  const device = gpu.device();
  const { result, module } = await gpu.module(AXPY_SOURCE, 'axpy');
  const garbage = await thrown(() => device.loadModule(new TextEncoder().encode('this is not a cubin')));
  assert.ok(garbage instanceof ArgumentError, String(garbage));
  // A cubin whose ELF header claims another machine (e_machine = x86-64): the driver must refuse it.
  const damaged = result.cubin.slice();
  damaged[18] = 0x3e;
  damaged[19] = 0x00;
  const invalid = await thrown(() => device.loadModule(damaged));
  assert.ok(invalid instanceof CudaError, String(invalid));
  t.diagnostic(`damaged cubin: ${invalid.message}`);
  assert.equal(invalid.call, 'cuModuleLoadDataEx');
  assert.match(invalid.cudaName, /^CUDA_ERROR_(INVALID_IMAGE|INVALID_PTX|NO_BINARY_FOR_GPU|INVALID_SOURCE|UNSUPPORTED_PTX_VERSION)$/);
  await gpu.expectUsable();
  const missing = await thrown(() => module.getKernel('no_such_kernel'));
  assert.ok(missing instanceof CudaError, String(missing));
  assert.equal(missing.cudaName, 'CUDA_ERROR_NOT_FOUND');
  await gpu.expectUsable();
});

test('runtime/gpu: a module loads from PTX text too', gpu.options, async () => {
  const device = gpu.device();
  const { result } = await gpu.module(AXPY_SOURCE, 'axpy');
  if (result.ptx === undefined) {
    // nvcc results carry no PTX; build a tiny PTX module by hand instead.
    const ptx = `.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry noop() { ret; }\n`;
    const module = device.loadModule(ptx);
    assert.equal(module.kind, 'ptx');
    module.getKernel('noop').launch(
      { grid: 1, block: 1 },
      kernelArgs(() => undefined),
    );
    device.synchronize();
    module.dispose();
  }
});
