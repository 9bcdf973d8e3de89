// The argument layout equals what nvcc gives the driver: random signatures are emitted as entry
// points (one translation unit per target), compiled to cubins, and every parameter's offset and
// size is read from the cubin's `.nv.info.<kernel>` section (EIATTR_KPARAM_INFO records), which is
// what cuFuncGetParamInfo reports at run time. No GPU needed; skipped LOUDLY without nvcc.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SourceBuilder } from '../sourceFile.ts';
import { sm80, sm90a } from '../target.ts';
import { toolAvailable } from '../testing/compileAndRunHost.ts';
import { KernelSignature } from './kernelSignature.ts';
import { kernelParamsArbitrary } from './testing/kernelSignatureArbitrary.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc) console.warn(`\n!!! SKIPPING the argument-layout nvcc test: "${nvcc}" not found (set TILEKIT_NVCC). !!!\n`);

interface CubinParam {
  readonly ordinal: number;
  readonly offset: number;
  readonly size: number;
}

/** Reads EIATTR_KPARAM_INFO (attribute 0x17) of every `.nv.info.<kernel>` section of a cubin (ELF64). */
export function cubinParamInfo(cubin: Uint8Array): Map<string, CubinParam[]> {
  const view = new DataView(cubin.buffer, cubin.byteOffset, cubin.byteLength);
  const shoff = Number(view.getBigUint64(0x28, true));
  const shentsize = view.getUint16(0x3a, true);
  const shnum = view.getUint16(0x3c, true);
  const shstrndx = view.getUint16(0x3e, true);
  const section = (i: number) => {
    const at = shoff + i * shentsize;
    return { name: view.getUint32(at, true), offset: Number(view.getBigUint64(at + 24, true)), size: Number(view.getBigUint64(at + 32, true)) };
  };
  const strtab = section(shstrndx).offset;
  const nameAt = (n: number): string => {
    let end = strtab + n;
    while (cubin[end] !== 0) end++;
    return new TextDecoder().decode(cubin.subarray(strtab + n, end));
  };
  const out = new Map<string, CubinParam[]>();
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    const name = nameAt(s.name);
    if (!name.startsWith('.nv.info.')) continue;
    const params: CubinParam[] = [];
    for (let p = s.offset; p < s.offset + s.size; ) {
      const format = cubin[p]!;
      const attribute = cubin[p + 1]!;
      if (format === 4) {
        // EIFMT_SVAL: u16 length, then the payload.
        const length = view.getUint16(p + 2, true);
        if (attribute === 0x17) {
          // index u32, ordinal u16, offset u16, then size in bits 18..31 of a u32.
          params.push({ ordinal: view.getUint16(p + 8, true), offset: view.getUint16(p + 10, true), size: view.getUint32(p + 12, true) >>> 18 });
        }
        p += 4 + length;
      } else if (format === 3) p += 4; // EIFMT_HVAL: u16 value
      else if (format === 2) p += 3; // EIFMT_BVAL: u8 value
      else p += 2; // EIFMT_NVAL: no value
    }
    out.set(name.slice('.nv.info.'.length), params.sort((a, b) => a.ordinal - b.ordinal));
  }
  return out;
}

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
        const run = spawnSync(nvcc, ['-cubin', `-arch=${target.arch as string}`, '-o', join(dir, 'k.cubin'), join(dir, 'k.cu')], { encoding: 'utf8', timeout: 300_000 });
        expect(run.status, `${run.stderr}\n${src.render()}`).toBe(0);
        const info = cubinParamInfo(new Uint8Array(readFileSync(join(dir, 'k.cubin'))));
        for (const sig of signatures) {
          const got = info.get(sig.name) ?? [];
          expect(got.map((p) => [p.offset, p.size]), `${sig.name}(${sig.layout.fields.map((f) => f.param.kind === 'scalar' ? f.param.scalar : f.param.kind).join(', ')})`).toEqual(
            sig.layout.fields.map((f) => [f.offset, f.size]),
          );
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
