// Every emitted warp GEMM leaf compiles for real targets, each inside a small kernel that calls it
// (an unused inline function's asm would never reach the assembler):
// - ONE .cu, ONE nvcc run for sm_80 and sm_90a: the mma.sync wrappers for both; wgmma (several N,
//   fp16/bf16, K- and MN-major), fence / commit_group / wait_group and the descriptor encoder
//   behind an sm_90a feature guard. The SASS is then checked for HMMA and HGMMA when cuobjdump runs.
// - the gfx942 MFMA wrappers as header-less HIP with clang-19 (-S), checked for v_mfma in the asm.
// No GPU is needed. A missing compiler skips its test LOUDLY.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  array,
  call,
  callFunction,
  cast,
  float32,
  gfx942,
  index,
  int32,
  mul,
  add,
  pointer,
  sm80,
  sm90a,
  SourceBuilder,
  uint16,
  uint32,
  uint64,
  voidType,
  type BlockBuilder,
  type CType,
  type Expr,
  type FunctionDef,
  type Target,
} from '@tilekit/codegen';
import { toolAvailable } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { makeWgmmaSmemLayout } from '../smemLayouts.ts';
import { defineWgmmaDescriptorEncoder, wgmmaSwizzleCode } from './wgmmaDescriptor.ts';
import {
  defineWgmmaCommitGroup,
  defineWgmmaFence,
  defineWgmmaFenceOperands,
  defineWgmmaWaitGroup,
  mfma32x32x8Atom,
  mmaSyncM16n8k16Atom,
  wgmmaAtom,
  type WarpGemmAtom,
} from './index.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
const cuobjdump = process.env['TILEKIT_CUOBJDUMP'] ?? 'cuobjdump';
const hasCuobjdump = hasNvcc && toolAvailable(cuobjdump);
const clangCandidates = [process.env['TILEKIT_CLANG'], 'clang-19', '/usr/lib/llvm-19/bin/clang-19'].filter(
  (c): c is string => c !== undefined,
);
const clang = clangCandidates.find((c) => toolAvailable(c));
if (!hasNvcc)
  console.warn(
    `\n!!! SKIPPING the warp GEMM nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). mma.sync/wgmma wrappers are NOT being compiled. !!!\n`,
  );
if (clang === undefined)
  console.warn(
    `\n!!! SKIPPING the MFMA HIP compile test: none of ${clangCandidates.join(', ')} runs (set TILEKIT_CLANG). MFMA wrappers are NOT being compiled. !!!\n`,
  );

/** Declare a register array and fill it from `src[base + i]` (or zeros). */
function registers(b: BlockBuilder, name: string, type: CType, length: number, src: Expr | null, base: Expr): Expr {
  const r = b.declare(name, array(type, length));
  b.forRange({ name: 'i', to: length, unroll: true }, (l, i) => l.assign(index(r, i), src === null ? 0 : index(src, add(base, i))));
  return r;
}

/** `out[base + i] = d[i]` for the whole accumulator. */
function storeAll(b: BlockBuilder, out: Expr, base: Expr, d: Expr, length: number): void {
  b.forRange({ name: 'i', to: length, unroll: true }, (l, i) => l.assign(index(out, add(base, i)), index(d, i)));
}

/** A kernel that loads A/B register fragments, calls the leaf once and stores D (mma.sync, MFMA). */
function registerAtomKernel(src: SourceBuilder, target: Target, atom: WarpGemmAtom): void {
  const wrapper = src.add(atom.defineWrapper(target));
  const na = atom.a!.registersPerThread;
  const nb = atom.b!.registersPerThread;
  const nc = atom.c.elementsPerThread;
  src.function(
    {
      name: `test_${wrapper.name}`,
      qualifiers: target.kernelQualifiers(),
      attributes: [target.launchBounds(atom.threads)],
      params: { out: pointer(float32), in_regs: pointer(uint32, { const: true }) },
    },
    (b, p) => {
      const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32));
      const ra = registers(b, 'ra', uint32, na, p.in_regs, mul(tid, na + nb));
      const rb = registers(b, 'rb', uint32, nb, p.in_regs, add(mul(tid, na + nb), na));
      const rc = registers(b, 'rc', float32, nc, null, tid);
      const rd = b.declare('rd', array(float32, nc));
      b.expr(call(wrapper.name, [rd, ra, rb, rc], voidType));
      storeAll(b, p.out, mul(tid, nc), rd, nc);
    },
  );
}

function nvidiaSource(): string {
  const src = new SourceBuilder({ dialect: sm90a, header: 'tilekit gemm: every warp GEMM leaf for sm_80 / sm_90a (compile test)' });
  for (const dtype of ['fp16', 'bf16'] as const) registerAtomKernel(src, sm80, mmaSyncM16n8k16Atom(dtype));
  // wgmma needs sm_90a's arch-specific features: the sm_80 pass sees none of it.
  src.preprocessor('#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)');
  const fence = src.add(defineWgmmaFence(sm90a));
  const commit = src.add(defineWgmmaCommitGroup(sm90a));
  const wait0 = src.add(defineWgmmaWaitGroup(sm90a, 0));
  src.add(defineWgmmaWaitGroup(sm90a, 1));
  const encode = src.add(defineWgmmaDescriptorEncoder(sm90a));
  const atoms = [
    ...[8, 64, 128, 256].flatMap((n) => (['fp16', 'bf16'] as const).map((dtype) => wgmmaAtom({ n, dtype }))),
    wgmmaAtom({ n: 64, dtype: 'fp16', aMajor: 'MN', bMajor: 'MN' }),
    wgmmaAtom({ n: 128, dtype: 'fp16', aSource: 'registers' }),
    wgmmaAtom({ n: 256, dtype: 'bf16', aSource: 'registers', bMajor: 'MN' }),
  ];
  const pins = new Map<number, FunctionDef>();
  for (const atom of atoms) {
    const wrapper = src.add(atom.defineWrapper(sm90a));
    const nd = atom.c.elementsPerThread;
    if (!pins.has(nd)) pins.set(nd, src.add(defineWgmmaFenceOperands(sm90a, nd)));
    const pin = pins.get(nd)!;
    const la = makeWgmmaSmemLayout({ swizzle: '128B', dtype: atom.aType, mn: 64, k: 64, major: atom.aMajor });
    const lb = makeWgmmaSmemLayout({
      swizzle: '128B',
      dtype: atom.bType,
      mn: atom.bMajor === 'K' ? Math.max(atom.n, 8) : Math.max(atom.n, 64),
      k: 64,
      major: atom.bMajor,
    });
    src.function(
      {
        name: `test_${wrapper.name}`,
        qualifiers: sm90a.kernelQualifiers(),
        attributes: [sm90a.launchBounds(128)],
        params: { out: pointer(float32), in_regs: pointer(uint32, { const: true }) },
      },
      (b, p) => {
        const tid = b.let('tid', int32, cast(sm90a.threadIdx('x'), int32));
        const sb = sm90a.declareShared(b, 'sb', uint16, lb.mn * lb.k, { align: 1024 });
        const desc = (smem: Expr, l: typeof la): Expr =>
          callFunction(encode, [
            cast(call('__cvta_generic_to_shared', [smem], uint64, { pure: true }), uint32),
            l.leadingByteOffset,
            l.strideByteOffset,
            0,
            wgmmaSwizzleCode(l.swizzle),
          ]);
        const db = b.let('desc_b', uint64, desc(sb, lb));
        const rd = registers(b, 'rd', float32, nd, null, tid);
        b.expr(call(pin.name, [rd], voidType));
        b.expr(callFunction(fence, []));
        if (atom.a === null) {
          const sa = sm90a.declareShared(b, 'sa', uint16, la.mn * la.k, { align: 1024 });
          b.expr(call(wrapper.name, [rd, b.let('desc_a', uint64, desc(sa, la)), db, 1], voidType));
        } else {
          const na = atom.a.registersPerThread;
          const ra = registers(b, 'ra', uint32, na, p.in_regs, mul(tid, na));
          b.expr(call(wrapper.name, [rd, ra, db, 1], voidType));
        }
        b.expr(callFunction(commit, []));
        b.expr(callFunction(wait0, []));
        b.expr(call(pin.name, [rd], voidType));
        storeAll(b, p.out, mul(tid, nd), rd, nd);
      },
    );
  }
  src.preprocessor('#endif');
  return src.render();
}

function hipSource(): string {
  const src = new SourceBuilder({ dialect: gfx942, header: 'tilekit gemm: MFMA leaves for gfx942 (compile test)' });
  for (const dtype of ['fp16', 'bf16'] as const) registerAtomKernel(src, gfx942, mfma32x32x8Atom(dtype));
  return src.render();
}

/** Run `exe args` in a temp dir holding `file` = `source`; returns what `collect` reads (given the compiler's stderr), or throws with the log and numbered source. */
function compileIn<T>(
  fileName: string,
  source: string,
  command: (file: string, dir: string) => [string, string[]],
  collect: (dir: string, log: string) => T,
): T {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-'));
  try {
    const file = join(dir, fileName);
    writeFileSync(file, source);
    const [exe, args] = command(file, dir);
    const res = spawnSync(exe, args, { encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0) {
      const numbered = source
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
        .join('\n');
      throw new Error(`${exe} ${args.join(' ')} failed:\n${res.stderr}${res.error?.message ?? ''}\n${numbered}`);
    }
    if (process.env['TILEKIT_KEEP_SOURCE'] !== undefined) writeFileSync(join(tmpdir(), fileName), source);
    return collect(dir, res.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('warp GEMM leaves compile', () => {
  it.skipIf(!hasNvcc)(
    'mma.sync (sm_80 + sm_90a) and wgmma + descriptors (sm_90a): one .cu, one nvcc run, every kernel assembled, no spills',
    () => {
      const log = compileIn(
        'warp_gemm.cu',
        nvidiaSource(),
        (file, dir) => [
          nvcc,
          [
            '-gencode=arch=compute_80,code=sm_80',
            '-gencode=arch=compute_90a,code=sm_90a',
            '-fatbin',
            '-std=c++17',
            '-Werror',
            'all-warnings',
            '-Xptxas',
            '-v',
            '-o',
            join(dir, 'warp_gemm.fatbin'),
            file,
          ],
        ],
        (dir, stderr) => {
          expect(existsSync(join(dir, 'warp_gemm.fatbin'))).toBe(true);
          return stderr;
        },
      );
      // ptxas -v names every entry it assembles: the guard let all wgmma kernels through for sm_90a only.
      const entries = (arch: string): string[] =>
        [...log.matchAll(new RegExp(`Compiling entry function '(\\w+)' for '${arch}'`, 'g'))].map((m) => m[1]!).sort();
      const mma = ['test_tk_mma_m16n8k16_f32_bf16_bf16_f32', 'test_tk_mma_m16n8k16_f32_f16_f16_f32'];
      const wgmma = [8, 64, 128, 256]
        .flatMap((n) => ['f16', 'bf16'].map((t) => `test_tk_wgmma_m64n${n}k16_f32_${t}_${t}_ss_kk`))
        .concat(
          'test_tk_wgmma_m64n64k16_f32_f16_f16_ss_mn',
          'test_tk_wgmma_m64n128k16_f32_f16_f16_rs_kk',
          'test_tk_wgmma_m64n256k16_f32_bf16_bf16_rs_kn',
        );
      expect(entries('sm_80')).toEqual(mma);
      expect(entries('sm_90a')).toEqual([...mma, ...wgmma].sort());
      expect(log).not.toMatch(/[1-9]\d* bytes spill (stores|loads)/);
      if (!hasCuobjdump) {
        console.warn(
          '\n!!! cuobjdump unavailable: the HMMA/HGMMA SASS check of the warp GEMM leaves is SKIPPED (ptxas -v entries checked instead). !!!\n',
        );
      }
    },
  );

  it.skipIf(clang === undefined)('MFMA 32x32x8 f16/bf16 compile as header-less HIP for gfx942 and emit v_mfma', () => {
    const asm = compileIn(
      'warp_gemm.hip',
      hipSource(),
      (file, dir) => [
        clang as string,
        [
          '-x',
          'hip',
          `--offload-arch=${gfx942.arch as string}`,
          '-nogpulib',
          '-nogpuinc',
          '--cuda-device-only',
          '-std=c++17',
          '-O1',
          '-Wall',
          '-Werror',
          '-S',
          '-o',
          join(dir, 'warp_gemm.s'),
          file,
        ],
      ],
      (dir) => readFileSync(join(dir, 'warp_gemm.s'), 'utf8'),
    );
    expect(asm).toMatch(/v_mfma_f32_32x32x8_?f16/);
    expect(asm).toMatch(/v_mfma_f32_32x32x8_?bf16/);
  });
});
