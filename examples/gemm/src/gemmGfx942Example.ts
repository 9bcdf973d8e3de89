// example_gemm -arch=gfx942: the GEMM instance of the gfx942 (MI300) catalog that runs the flags'
// problem, emitted as HIP and compiled by clang-19 (its AMDGPU backend; no ROCm), with its resources and
// the CPU reference (-v=1). tilekit launches no HIP kernels and no AMD GPU is here: it says so, exit 0.
import { ArgParseError, formatTable } from '@tilekit/host';
import {
  checkGemmProblem,
  compileGfx942,
  findGfx942Clang,
  formatGemmProblem,
  formatGfx942Vgprs,
  GEMM_GFX942_CATALOG,
  gemmOperandElements,
  NoGemmInstanceError,
  type CheckedGemmProblem,
  type GemmGfx942Instance,
} from '@tilekit/kernel-gemm';
import { inputsAndReference, problemFromArgs, type GemmArgs } from './gemmExample.ts';

/** The first gfx942 instance whose predicates hold; `NoGemmInstanceError` with every instance's reasons otherwise. */
export function pickGfx942Instance(p: CheckedGemmProblem): GemmGfx942Instance {
  const rejections = GEMM_GFX942_CATALOG.map((instance) => ({ instance: instance.name, reasons: instance.unsupported(p) }));
  const index = rejections.findIndex((r) => r.reasons.length === 0);
  if (index < 0) throw new NoGemmInstanceError(p, rejections, 0);
  return GEMM_GFX942_CATALOG[index]!;
}

/**
 * The gfx942 path of the example (see the file comment). Returns the exit code: 0, or 1 when no
 * gfx942 instance runs the problem. Throws ArgParseError naming `-instance` (the gfx942 path
 * dispatches; it names no instance) or `-arch` (no clang-19 here) before compiling.
 */
export async function runGemmGfx942Example(args: GemmArgs, log: (line: string) => void): Promise<number> {
  if (args.get('instance') !== '') throw new ArgParseError('-instance', '-instance names sm_90a/sm_80 instances: -arch=gfx942 dispatches');
  const clang = findGfx942Clang();
  if (clang === undefined)
    throw new ArgParseError('-arch', '-arch=gfx942 needs clang-19 (TILEKIT_CLANG, clang-19 or /usr/lib/llvm-19/bin/clang-19)');
  const p = checkGemmProblem(problemFromArgs(args));
  let instance: GemmGfx942Instance;
  try {
    instance = pickGfx942Instance(p);
  } catch (error) {
    if (!(error instanceof NoGemmInstanceError)) throw error;
    log(error.message);
    return 1;
  }
  const policy = instance.policy;
  log(`example_gemm: ${formatGemmProblem(problemFromArgs(args))} on gfx942`);
  log(
    `instance: ${instance.name} (key ${instance.key.hash}), tile ${policy.tileM}x${policy.tileN}x${policy.tileK}, ` +
      `${instance.threads} threads (wave64), ${instance.ldsBytes} B LDS`,
  );
  const { resources: r } = compileGfx942(instance, clang);
  log(
    formatTable(
      ['compiler', 'arch', 'VGPRs (arch + AGPR)', 'SGPRs', 'spills VGPR/SGPR', 'scratch (B)', 'LDS (B)', 'waves/SIMD'],
      [
        [
          'clang-19',
          'gfx942',
          formatGfx942Vgprs(r),
          r.sgprCount,
          `${r.vgprSpillCount}/${r.sgprSpillCount}`,
          r.privateSegmentBytes,
          r.groupSegmentBytes,
          r.occupancy,
        ],
      ],
    ),
  );
  const { check } = inputsAndReference(args, p, gemmOperandElements(p), log);
  log(
    `no AMD device: the gfx942 kernel was generated and compiled${check ? ' and the CPU reference computed' : ''}; ` +
      'tilekit does not launch HIP kernels, so nothing ran on a GPU.',
  );
  return 0;
}
