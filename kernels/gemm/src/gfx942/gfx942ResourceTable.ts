// The resource table of the gfx942 instances (issue 24): what the AMDGPU backend reports per kernel.
import type { Gfx942KernelResources } from './gfx942Resources.ts';

/** One row: the catalog it comes from and the kernel's resources. */
export interface Gfx942ResourceRow {
  readonly catalog: string;
  readonly resources: Gfx942KernelResources;
}

/** A kernel's VGPRs as `arch + AGPR = total` (arch counting up to the AGPR offset). */
export function formatGfx942Vgprs(r: Gfx942KernelResources): string {
  return `${r.vgprCount - r.agprCount} + ${r.agprCount} = ${r.vgprCount}`;
}

/**
 * A markdown table, one row per kernel in the given order: catalog, instance, VGPRs (arch + AGPR =
 * total), SGPRs, VGPR/SGPR spills, scratch bytes, LDS bytes, workgroup size and waves per SIMD (the
 * backend's occupancy).
 */
export function formatGfx942ResourceTable(rows: readonly Gfx942ResourceRow[]): string {
  const head = [
    '| catalog | instance | VGPRs (arch + AGPR = total) | SGPRs | spills VGPR/SGPR | scratch (B) | LDS (B) | threads | waves/SIMD |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const body = rows.map(({ catalog, resources: r }) => {
    const cells = [catalog, `\`${r.name}\``, formatGfx942Vgprs(r), r.sgprCount, `${r.vgprSpillCount}/${r.sgprSpillCount}`];
    return `| ${[...cells, r.privateSegmentBytes, r.groupSegmentBytes, r.maxFlatWorkgroupSize, r.occupancy].join(' | ')} |`;
  });
  return [...head, ...body].join('\n');
}
