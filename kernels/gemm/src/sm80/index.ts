// The sm_80 GEMM kernels (cp.async multistage pipeline, ldmatrix + mma.sync).
export { GemmSm80Instance, SM80_COPY_ELEMENTS, type GemmSm80Policy } from './gemmSm80Instance.ts';
export {
  checkGemmSm80Catalog,
  findGemmSm80Instance,
  GEMM_SM80_CATALOG,
  GEMM_SM80_CATALOG_SM90A,
  gemmSm80CatalogFor,
  GEMM_SM80_LAYOUTS,
  GEMM_SM80_POLICIES,
  GEMM_SM80_TILE,
} from './gemmSm80Catalog.ts';
export { GemmSm80Kernel, prepareGemmSm80Launch, type PreparedGemmSm80Launch } from './gemmSm80Launcher.ts';
