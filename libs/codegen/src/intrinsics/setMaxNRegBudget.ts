// Whether a warp-specialized kernel's setmaxnreg budgets can all be granted: the registers a block
// launches with (what ptxas gives it under __launch_bounds__(threads, 1)) are the pool that the
// producer's `setmaxnreg.dec` returns to and the consumers' `setmaxnreg.inc` draws from; an inc that
// the pool cannot cover waits forever (measured: a 384-thread kernel at 32/240 hung on an H200).

/** The register file of one SM (and the most one block may use). */
const REGISTER_FILE = 65536;
/** The most registers a thread may have. */
const MAX_PER_THREAD = 255;

/**
 * The registers per thread ptxas gives a kernel with `__launch_bounds__(threads, 1)` whose largest
 * setmaxnreg budget is `largestBudget`: the smaller of that budget and the launch bound's cap
 * (65536 / threads rounded down to a multiple of 8, at most 255). Checked against ptxas (nvcc 13.0,
 * sm_90a) for 256, 384, 512 and 640 threads by `setMaxNRegBudget.spec.ts`.
 */
export function setMaxNRegLaunchRegisters(threads: number, largestBudget: number): number {
  const cap = Math.min(MAX_PER_THREAD, Math.floor(REGISTER_FILE / threads / 8) * 8);
  return Math.min(cap, largestBudget);
}

/** The warp-specialized split of one block: its threads, the producer's share and both budgets. */
export interface SetMaxNRegSplit {
  readonly threads: number;
  readonly producerThreads: number;
  readonly producerRegisters: number;
  readonly consumerRegisters: number;
}

/**
 * Why the consumers' `setmaxnreg.inc` could not be granted (or the producer's `dec` would raise its
 * budget), undefined when the split is sound: with L the launch registers
 * ({@link setMaxNRegLaunchRegisters}, allocated in units of 8), the producer must not ask for more
 * than L and must give back at least what the consumers take: (L − producer)·producerThreads ≥
 * (consumer − L)·consumerThreads.
 */
export function setMaxNRegBudgetProblem(s: SetMaxNRegSplit): string | undefined {
  const { threads, producerThreads, producerRegisters: pr, consumerRegisters: cr } = s;
  const launch = Math.ceil(setMaxNRegLaunchRegisters(threads, Math.max(pr, cr)) / 8) * 8;
  if (pr > launch) return `the producer's ${pr} exceeds the ${launch} registers a thread launches with (setmaxnreg.dec cannot raise)`;
  const consumerThreads = threads - producerThreads;
  if ((launch - pr) * producerThreads < (cr - launch) * consumerThreads)
    return (
      `the consumers' raise above the launch's ${launch} must come out of the producer's release: ` +
      `(${launch} − ${pr})·${producerThreads} ≥ (${cr} − ${launch})·${consumerThreads}`
    );
  return undefined;
}

/**
 * For a block of `threads` whose last warpgroup (128 threads) produces: calls `fail(rule, found)`
 * with {@link setMaxNRegBudgetProblem}'s rule when the budgets cannot all be granted.
 */
export function checkSetMaxNRegBudget(
  threads: number,
  producerRegisters: number,
  consumerRegisters: number,
  fail: (rule: string, found: string) => void,
): void {
  const rule = setMaxNRegBudgetProblem({ threads, producerThreads: 128, producerRegisters, consumerRegisters });
  if (rule !== undefined) fail(rule, `producer ${producerRegisters}, consumer ${consumerRegisters}, ${threads} threads`);
}
