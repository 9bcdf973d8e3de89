import { TilekitError } from '@tilekit/numeric';

/** What the AMDGPU backend reports for one compiled kernel (the `.s` file's `amdhsa.kernels` metadata). */
export interface Gfx942KernelResources {
  readonly name: string;
  /** Total VGPRs a wave allocates (architectural VGPRs + AGPRs, as `.vgpr_count`). */
  readonly vgprCount: number;
  /** Accumulation VGPRs (AGPRs) among them. */
  readonly agprCount: number;
  readonly sgprCount: number;
  readonly vgprSpillCount: number;
  readonly sgprSpillCount: number;
  /** Scratch bytes per lane (0 unless something spilled or an array stayed in memory). */
  readonly privateSegmentBytes: number;
  /** Static LDS bytes. */
  readonly groupSegmentBytes: number;
  readonly kernargBytes: number;
  readonly maxFlatWorkgroupSize: number;
  readonly wavefrontSize: number;
  /** Waves per SIMD the backend computes from the registers and LDS (its `; Occupancy:` line). */
  readonly occupancy: number;
}

/** The `.s` file has no kernel metadata, or an entry lacks a field. */
export class Gfx942ResourcesError extends TilekitError {
  constructor(message: string) {
    super('gemm/gfx942-resources', message);
  }
}

const fields = {
  vgprCount: 'vgpr_count',
  agprCount: 'agpr_count',
  sgprCount: 'sgpr_count',
  vgprSpillCount: 'vgpr_spill_count',
  sgprSpillCount: 'sgpr_spill_count',
  privateSegmentBytes: 'private_segment_fixed_size',
  groupSegmentBytes: 'group_segment_fixed_size',
  kernargBytes: 'kernarg_segment_size',
  maxFlatWorkgroupSize: 'max_flat_workgroup_size',
  wavefrontSize: 'wavefront_size',
} as const;

/** Each kernel's `; Occupancy: N` from the `; Kernel info:` comments the backend writes after its `.size` line. */
function occupancies(asm: string): Map<string, number> {
  const out = new Map<string, number>();
  const pattern = /^\s*\.size\s+([\w.$]+),[^\n]*\n(?:[^\n]*\n)*?; Kernel info:\n(?:;[^\n]*\n)*?; Occupancy: (\d+)$/gm;
  for (const m of asm.matchAll(pattern)) out.set(m[1]!, Number(m[2]));
  return out;
}

/**
 * Reads every kernel's resources from clang's AMDGPU assembly (`-S`): the `amdhsa.kernels` list of
 * the `.amdgpu_metadata` YAML block, one entry per kernel, its scalar fields at the entry's own
 * indentation (nested lists such as `.args` are skipped), and the backend's occupancy comment of the
 * kernel. Throws `Gfx942ResourcesError` when the block is missing or an entry lacks a field.
 */
export function parseGfx942Resources(asm: string): Gfx942KernelResources[] {
  const waves = occupancies(asm);
  const start = asm.indexOf('amdhsa.kernels:');
  if (start < 0)
    throw new Gfx942ResourcesError('no amdhsa.kernels metadata in the assembly (was it compiled with -S for an amdhsa target?)');
  const lines = asm.slice(start).split('\n').slice(1);
  const entries: Map<string, string>[] = [];
  for (const line of lines) {
    if (/^\S/.test(line)) break; // the next top-level key ends the list
    const m = /^ {2}(- | {2})\.([\w]+):\s*(\S.*)?$/.exec(line);
    if (m === null) continue;
    if (m[1] === '- ') entries.push(new Map());
    const entry = entries.at(-1);
    if (entry !== undefined && m[3] !== undefined) entry.set(m[2]!, m[3].trim());
  }
  return entries.map((e) => {
    const name = e.get('name');
    if (name === undefined) throw new Gfx942ResourcesError('a kernel entry has no .name');
    const out: Record<string, number | string> = { name };
    for (const [key, field] of Object.entries(fields)) {
      const v = e.get(field);
      if (v === undefined || !/^\d+$/.test(v))
        throw new Gfx942ResourcesError(`kernel ${name}: .${field} is missing or not a number (${String(v)})`);
      out[key] = Number(v);
    }
    const occupancy = waves.get(name);
    if (occupancy === undefined) throw new Gfx942ResourcesError(`kernel ${name}: no '; Occupancy:' line after its code`);
    out['occupancy'] = occupancy;
    return out as unknown as Gfx942KernelResources;
  });
}
