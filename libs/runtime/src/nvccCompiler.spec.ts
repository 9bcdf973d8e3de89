import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArgumentError } from '@tilekit/numeric';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompileError } from './compileError.ts';
import { Device } from './device.ts';
import { NvccCompiler } from './nvccCompiler.ts';
import { AXPY_SOURCE, SPILL_SOURCE, SYNTAX_ERROR_SOURCE } from './testing/kernelSources.ts';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const hasNvcc = NvccCompiler.available();
let cacheDir: string;

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'tilekit-nvcc-spec-'));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

function isElf(bytes: Uint8Array): boolean {
  return bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46;
}

// A second node process compiling through the package sources; prints the result as JSON.
function compileInChild(dir: string, source: string, name: string): Promise<{ key: string; cached: boolean; bytes: number }> {
  const code = `
    import { NvccCompiler } from '@tilekit/runtime';
    const r = await new NvccCompiler({ cacheDir: ${JSON.stringify(dir)} })
      .compile({ source: ${JSON.stringify(source)}, name: ${JSON.stringify(name)}, arch: 'sm_90a' });
    console.log(JSON.stringify({ key: r.key, cached: r.cached, bytes: r.cubin.length }));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@tilekit/source', '--input-type=module', '-e', code], {
      cwd: packageDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (status) => (status === 0 ? resolve(JSON.parse(out.trim())) : reject(new Error(err))));
  });
}

describe.skipIf(!hasNvcc)('NvccCompiler', () => {
  it('compiles a generated extern "C" kernel to an sm_90a cubin and reports its resources', async () => {
    const compiler = new NvccCompiler({ cacheDir });
    expect(await compiler.version()).toMatch(/^nvcc .*release \d+\.\d+/);
    const result = await compiler.compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'sm_90a' });
    expect(isElf(result.cubin)).toBe(true);
    expect(result.cached).toBe(false);
    expect(result.arch).toBe('sm_90a');
    expect(result.compiler).toBe('nvcc');
    expect(result.resourcesReported).toBe(true);
    expect(result.resources.registers).toBeGreaterThan(0);
    expect(result.resources.spillStores).toBe(0);
    expect(Object.keys(result.functions)).toEqual(['axpy']);
    expect(result.log).toMatch(/-cubin -arch=sm_90a -Xptxas -v -O3/);
    expect(readFileSync(result.sourcePath, 'utf8')).toBe(AXPY_SOURCE);
    expect(new Uint8Array(readFileSync(result.binaryPath))).toEqual(result.cubin);
    const meta = JSON.parse(readFileSync(join(dirname(result.binaryPath), 'meta.json'), 'utf8'));
    expect(meta).toMatchObject({ key: result.key, arch: 'sm_90a', name: 'axpy', functions: { axpy: result.resources } });
    expect(dirname(result.binaryPath)).toBe(join(cacheDir, result.key.slice(0, 2), result.key));
  });

  it('reports register spills', async () => {
    const compiler = new NvccCompiler({ cacheDir });
    const result = await compiler.compile({ source: SPILL_SOURCE, name: 'spill', arch: 'sm_90a', flags: ['-maxrregcount=16'] });
    expect(result.resources.spillStores).toBeGreaterThan(0);
    expect(result.resources.spillLoads).toBeGreaterThan(0);
    expect(result.resources.stackFrame).toBeGreaterThan(0);
    expect(result.resources.registers).toBeLessThanOrEqual(32);
  });

  it('hits the cache on a second compile, also from a new compiler', async () => {
    const first = await new NvccCompiler({ cacheDir }).compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'sm_90a' });
    const second = await new NvccCompiler({ cacheDir }).compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'sm_90a' });
    expect(second.cached).toBe(true);
    expect(second.key).toBe(first.key);
    expect(second.binaryPath).toBe(first.binaryPath);
    expect(second.cubin).toEqual(first.cubin);
    expect(second.resources).toEqual(first.resources);
    const other = await new NvccCompiler({ cacheDir }).compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'sm_80' });
    expect(other.key).not.toBe(first.key);
  });

  it('survives concurrent writers of one key: two processes and two compilers at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tilekit-nvcc-race-'));
    try {
      const source = `${AXPY_SOURCE}// race ${process.pid}\n`;
      const [a, b, c, d] = await Promise.all([
        compileInChild(dir, source, 'axpy'),
        compileInChild(dir, source, 'axpy'),
        new NvccCompiler({ cacheDir: dir }).compile({ source, name: 'axpy', arch: 'sm_90a' }),
        new NvccCompiler({ cacheDir: dir }).compile({ source, name: 'axpy', arch: 'sm_90a' }),
      ]);
      for (const r of [a, b, c, d]) expect(r.key).toBe(c.key);
      expect(new Set([a.bytes, b.bytes, c.cubin.length, d.cubin.length]).size).toBe(1);
      // Exactly one entry, no staging leftovers, and it verifies.
      expect(await readdir(join(dir, c.key.slice(0, 2)))).toEqual([c.key]);
      const again = await new NvccCompiler({ cacheDir: dir }).compile({ source, name: 'axpy', arch: 'sm_90a' });
      expect(again.cached).toBe(true);
      expect(again.cubin).toEqual(c.cubin);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('raises CompileError with the first error as file:line, the full log, and the kept source', async () => {
    const compiler = new NvccCompiler({ cacheDir });
    const error = await compiler.compile({ source: SYNTAX_ERROR_SOURCE, name: 'broken', arch: 'sm_90a' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CompileError);
    const compileError = error as CompileError;
    expect(compileError.sourcePath).toMatch(/failed\/[0-9a-f]{64}\/kernel\.cu$/);
    expect(existsSync(compileError.sourcePath)).toBe(true);
    expect(readFileSync(compileError.sourcePath, 'utf8')).toBe(SYNTAX_ERROR_SOURCE);
    expect(compileError.message).toContain(`${compileError.sourcePath}:3: error: expected a ";"`);
    expect(compileError.message).toContain('3 |   p[0] = x;');
    expect(compileError.log).toContain('kernel.cu(3): error: expected a ";"');
    expect(compileError.diagnostics[0]).toMatchObject({ severity: 'error', line: 3 });
    expect(readFileSync(join(dirname(compileError.sourcePath), 'compile.log'), 'utf8')).toBe(compileError.log);
  });

  it('raises CompileError when the requested entry point is not in the binary', async () => {
    const compiler = new NvccCompiler({ cacheDir });
    await expect(compiler.compile({ source: AXPY_SOURCE, name: 'saxpy', arch: 'sm_90a' })).rejects.toThrow(
      /no entry function named saxpy \(entries: axpy\)/,
    );
  });

  it('rejects bad requests before running nvcc', async () => {
    const compiler = new NvccCompiler({ cacheDir });
    await expect(compiler.compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'sm_90a', flags: ['-arch=sm_80'] })).rejects.toThrow(
      ArgumentError,
    );
    await expect(compiler.compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'sm_90a', flags: ['-o', 'x'] })).rejects.toThrow(/flags/);
    await expect(compiler.compile({ source: AXPY_SOURCE, name: 'a-b', arch: 'sm_90a' })).rejects.toThrow(/name: must be a C identifier/);
    await expect(compiler.compile({ source: ' ', name: 'axpy', arch: 'sm_90a' })).rejects.toThrow(/source/);
    await expect(compiler.compile({ source: AXPY_SOURCE, name: 'axpy', arch: 'compute_90' as never })).rejects.toThrow(/arch/);
  });

  it.skipIf(Device.count() > 0)('needs an explicit arch when there is no device', async () => {
    await expect(new NvccCompiler({ cacheDir }).compile({ source: AXPY_SOURCE, name: 'axpy' })).rejects.toThrow(
      /arch: must be given when no CUDA device is present/,
    );
  });
});
