import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kernelArgs } from './kernelArgs.ts';
import { encodeTensorMapTiled } from './tensorMap.ts';
import { gpu } from './testing/gpu.ts';
import { TMA_TILE_SOURCE } from './testing/kernelSources.ts';

test('runtime/gpu: a TMA descriptor from cuTensorMapEncodeTiled loads a tile (and zero-fills out of bounds)', gpu.options, async () => {
  const device = gpu.device();
  if (device.computeCapability.major < 9) return;
  const cols = 64;
  const rows = 48;
  const matrix = Float32Array.from({ length: rows * cols }, (_, i) => i + 1);
  const global = device.upload(matrix);
  const map = encodeTensorMapTiled(device, {
    dtype: 'float32',
    address: global,
    globalDims: [cols, rows],
    globalStrides: [cols * 4],
    boxDims: [32, 16],
  });
  assert.equal(map.length, 128);
  assert.ok(map.some((b) => b !== 0));
  const kernel = await gpu.kernel(TMA_TILE_SOURCE, 'tma_tile');
  const out = device.alloc(16 * 32 * 4);
  for (const [x0, y0] of [
    [32, 16],
    [48, 40],
  ] as const) {
    out.fill(0xff);
    kernel.launch(
      { grid: 1, block: 128 },
      kernelArgs((b) => b.tensorMap(map).pointer(out).i32(x0).i32(y0)),
    );
    const tile = out.copyToHost(new Float32Array(16 * 32));
    for (let r = 0; r < 16; r += 1) {
      for (let c = 0; c < 32; c += 1) {
        const row = y0 + r;
        const col = x0 + c;
        const expected = row < rows && col < cols ? matrix[row * cols + col] : 0;
        assert.equal(tile[r * 32 + c], expected, `tile at (${x0}, ${y0}) [${r}][${c}]`);
      }
    }
  }
  out.dispose();
  global.dispose();
});
