import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolAvailable } from '../testing/compileAndRunHost.ts';
import { cubinKernelParams, elfSections } from './cubinKernelParams.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc) console.warn(`\n!!! SKIPPING the cubin parameter-layout test: "${nvcc}" not found (set TILEKIT_NVCC). !!!\n`);

const SOURCE = `struct Five { float a[5]; };
extern "C" __global__ void mixed(const float* x, int n, double d, Five s, char c, long long* y) { if (n) y[0] = x[0] + d + s.a[3] + c; }
extern "C" __global__ void empty() {}
`;

function compile(arch: string): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-cubin-params-'));
  try {
    writeFileSync(join(dir, 'k.cu'), SOURCE);
    const run = spawnSync(nvcc, ['-cubin', `-arch=${arch}`, '-o', join(dir, 'k.cubin'), join(dir, 'k.cu')], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (run.status !== 0) throw new Error(run.stderr);
    return new Uint8Array(readFileSync(join(dir, 'k.cubin')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('cubinKernelParams', () => {
  it('is undefined for bytes that are not an ELF64 image, whatever they are', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => {
        const notElf = bytes.length < 4 || bytes[0] !== 0x7f || bytes[1] !== 0x45;
        fc.pre(notElf);
        expect(cubinKernelParams(bytes, 'k')).toBeUndefined();
      }),
    );
    expect(cubinKernelParams(new TextEncoder().encode('.version 8.0\n.target sm_90a\n'), 'k')).toBeUndefined();
  });

  for (const arch of ['sm_90a', 'sm_80']) {
    it.runIf(hasNvcc)(
      `${arch}: reads the C ABI layout nvcc gave, [] without parameters, undefined for an unknown kernel or a cut image`,
      () => {
        const cubin = compile(arch);
        expect(cubinKernelParams(cubin, 'mixed')).toEqual([
          { offset: 0, size: 8 },
          { offset: 8, size: 4 },
          { offset: 16, size: 8 },
          { offset: 24, size: 20 },
          { offset: 44, size: 1 },
          { offset: 48, size: 8 },
        ]);
        expect(cubinKernelParams(cubin, 'empty')).toEqual([]);
        expect(cubinKernelParams(cubin, 'absent')).toBeUndefined();
        expect(elfSections(cubin.subarray(0, 64))).toBeUndefined();
        expect(cubinKernelParams(cubin.subarray(0, 200), 'mixed')).toBeUndefined();
      },
    );
  }
});
