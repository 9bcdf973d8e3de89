// The sm_80 GEMM kernels (cp.async multistage pipeline, ldmatrix + mma.sync).
export { GemmSm80Instance, SM80_COPY_ELEMENTS, type GemmSm80Policy } from './gemmSm80Instance.ts';
export { checkGemmSm80Catalog, GEMM_SM80_CATALOG, GEMM_SM80_LAYOUTS, GEMM_SM80_POLICIES, GEMM_SM80_TILE } from './gemmSm80Catalog.ts';
