import { TilekitError } from '@tilekit/numeric';

/**
 * Every error the gemm package raises on purpose. `code` is one of the stable `gemm/*` strings
 * below; the message names the argument, the rule it broke and what was found.
 */
export class GemmError extends TilekitError {}

/** One candidate the warp-GEMM dispatcher looked at and why it did not match. */
export interface WarpGemmRejection {
  readonly atom: string;
  readonly reason: string;
}

/** `selectWarpGemmAtom`: no atom matches the query; `rejections` says why for each candidate. */
export class WarpGemmSelectionError extends GemmError {
  readonly query: string;
  readonly rejections: readonly WarpGemmRejection[];

  constructor(query: string, rejections: readonly WarpGemmRejection[]) {
    const lines = rejections.map((r) => `  - ${r.atom}: ${r.reason}`);
    super('gemm/no-warp-gemm-atom', `selectWarpGemmAtom: no warp GEMM atom matches ${query}; candidates:\n${lines.join('\n')}`);
    this.query = query;
    this.rejections = rejections;
  }
}

/** A warp GEMM atom was asked for a shape, dtype or target it does not have. */
export class WarpGemmAtomError extends GemmError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-warp-gemm-atom', `${what}: ${rule} (got ${found})`);
  }
}

/** A wgmma matrix descriptor field is misaligned or does not fit its bit field. */
export class WgmmaDescriptorError extends GemmError {
  constructor(field: string, rule: string, found: string) {
    super('gemm/invalid-wgmma-descriptor', `wgmma descriptor ${field}: ${rule} (got ${found})`);
  }
}

/** A swizzled shared-memory layout was asked for a shape its swizzle atom cannot tile. */
export class SmemLayoutError extends GemmError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-smem-layout', `${what}: ${rule} (got ${found})`);
  }
}

/** `referenceGemm` got operands whose shapes, strides or lengths disagree. */
export class ReferenceGemmError extends GemmError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-reference-arguments', `referenceGemm ${what}: ${rule} (got ${found})`);
  }
}
