// Which kernels run an attention-backward problem: the triples it is selected from (the dense ones,
// or the score-modifier catalog's dq_dk_dv instances of its modifier with their dot_do_o and
// convert_dq), the traits none of them has as argument errors, the pure launcher's choice, and
// the compiled instances of the chosen triple.
import {
  FmhaBwdLauncher,
  type FmhaBwdExecutor,
  type FmhaBwdRecordTriple,
  FmhaBwdArgumentError,
  fmhaBwdTraitsOf,
  type CheckedFmhaBwdProblem,
} from '@tilekit/fmha';
import { ArgumentProblems, TilekitError } from '@tilekit/numeric';
import {
  FMHA_BWD_CONVERT_DQ_CATALOG,
  FMHA_BWD_DOT_DO_O_CATALOG,
  FMHA_BWD_DQ_DK_DV_CATALOG,
  FMHA_BWD_TRIPLES,
  fmhaBwdKernelsOf,
  fmhaBwdTripleOf,
  type FmhaBwdKernelSet,
} from './fmhaBwdCatalog.ts';
import type { FmhaBwdDqDkDvInstance } from './fmhaBwdDqDkDvInstance.ts';
import { FMHA_BWD_SCORE_MOD_CATALOG } from './fmhaBwdScoreModCatalog.ts';

/** No triple of the catalog runs the problem (the pure launcher said so, naming the unmatched traits). */
export class NoFmhaBwdInstanceError extends TilekitError {
  constructor(message: string) {
    super('fmha-bwd/no-instance', message);
  }
}

/** The triples a problem is selected from and the dq_dk_dv instances they name. */
export interface FmhaBwdProblemCatalog {
  readonly triples: readonly FmhaBwdRecordTriple[];
  readonly dqDkDv: readonly FmhaBwdDqDkDvInstance[];
}

/**
 * Without a score modifier: `FMHA_BWD_TRIPLES` over `FMHA_BWD_DQ_DK_DV_CATALOG`. With one: the
 * instances of `FMHA_BWD_SCORE_MOD_CATALOG` applying it, each with its batch-mode and group-mode
 * triple (`fmhaBwdTripleOf`). Given `triples` replace them; their dq_dk_dv instances are then
 * looked up in both catalogs.
 */
export function fmhaBwdCatalogFor(p: CheckedFmhaBwdProblem, triples?: readonly FmhaBwdRecordTriple[]): FmhaBwdProblemCatalog {
  if (triples !== undefined) return { triples, dqDkDv: [...FMHA_BWD_DQ_DK_DV_CATALOG, ...FMHA_BWD_SCORE_MOD_CATALOG] };
  if (p.scoreModifier === undefined) return { triples: FMHA_BWD_TRIPLES, dqDkDv: FMHA_BWD_DQ_DK_DV_CATALOG };
  const dqDkDv = FMHA_BWD_SCORE_MOD_CATALOG.filter((i) => i.policy.scoreModifier?.tag === p.scoreModifier);
  return { triples: dqDkDv.flatMap((i) => [fmhaBwdTripleOf(i, false), fmhaBwdTripleOf(i, true)]), dqDkDv };
}

/**
 * The problem's traits that no triple of `triples` has, as argument errors rather than a missing
 * instance: the dtype, head dims (hdimQ/hdimV pairs of the catalog), the mask kind for those head
 * dims (no generic (y, x) mask), a deterministic dQ for those head dims. With a score modifier the
 * rules name it (`triples` are then its catalog's). Throws one `FmhaBwdArgumentError` naming every
 * broken `problem.dtype` / `problem.hdimQ` / `problem.mask` / `problem.deterministic`.
 */
export function checkFmhaBwdCatalogTraits(p: CheckedFmhaBwdProblem, triples: readonly FmhaBwdRecordTriple[]): void {
  const v = new ArgumentProblems(FmhaBwdArgumentError);
  const modifier = p.scoreModifier === undefined ? '' : `${p.scoreModifier} `;
  const kernels = `the ${modifier}backward kernels`;
  const records = triples.map((t) => t.dqDkDv);
  const ofDtype = records.filter((r) => r.dtype === p.dtype);
  const dims = ofDtype.filter((r) => r.hdimQ === p.hdimQ && r.hdimV === p.hdimV);
  if (records.length > 0 && ofDtype.length === 0) {
    v.report('problem.dtype', `must be ${[...new Set(records.map((r) => r.dtype))].join(' or ')}: ${kernels} take no ${p.dtype}`, p.dtype);
  } else if (dims.length === 0) {
    const pairs = [...new Set(ofDtype.map((r) => `${r.hdimQ}/${r.hdimV}`))].join(', ');
    v.report('problem.hdimQ', `with hdimV must be one of ${kernels}' head dims (${pairs})`, `${p.hdimQ}/${p.hdimV}`);
  } else {
    if (!dims.some((r) => r.masks.includes(p.mask.kind)))
      v.report(
        'problem.mask',
        `must be ${[...new Set(dims.flatMap((r) => r.masks))].join(' or ')}: ${kernels} take no ${p.mask.kind} mask`,
        p.mask.kind,
      );
    if (p.deterministic && dims.every((r) => r.dqAccumulation === 'atomic'))
      v.report('problem.deterministic', `must be false at head dim ${p.hdimQ}: no deterministic ${modifier}backward kernel for it`, true);
  }
  v.throwIfAny();
}

/** How a problem is dispatched besides the problem. */
export interface FmhaBwdDispatchOptions<TStream> {
  /** Triples to select from (default: `fmhaBwdCatalogFor`'s). */
  readonly triples?: readonly FmhaBwdRecordTriple[];
  /** The device operations of the launcher (a planning caller passes one that does nothing). */
  readonly executor: FmhaBwdExecutor<TStream>;
  /** SMs of the device (the deterministic batch-mode workspace depends on them). */
  readonly smCount: number;
  /** Where the launcher's "no instance" warning goes (it is also the error's message). */
  readonly warn?: (message: string) => void;
}

/** The launcher over the problem's triples and the compiled instances of the triple it chose. */
export interface FmhaBwdDispatch<TStream> {
  readonly launcher: FmhaBwdLauncher<TStream>;
  readonly kernels: FmhaBwdKernelSet;
}

/**
 * Dispatches a checked problem: `checkFmhaBwdCatalogTraits` over `fmhaBwdCatalogFor`'s triples
 * (`FmhaBwdArgumentError`), the pure launcher's first matching triple (`NoFmhaBwdInstanceError`
 * with its unmatched traits when none), and that triple's instances; a dq_dk_dv instance that does
 * not apply the problem's score modifier (given triples of another catalog) is a
 * `NoFmhaBwdInstanceError` too.
 */
export function dispatchFmhaBwd<TStream>(p: CheckedFmhaBwdProblem, options: FmhaBwdDispatchOptions<TStream>): FmhaBwdDispatch<TStream> {
  const catalog = fmhaBwdCatalogFor(p, options.triples);
  checkFmhaBwdCatalogTraits(p, catalog.triples);
  let warning = '';
  const launcher = new FmhaBwdLauncher<TStream>(fmhaBwdTraitsOf(p), {
    catalog: catalog.triples,
    executor: options.executor,
    smCount: options.smCount,
    warn: (m) => {
      warning = m;
      options.warn?.(m);
    },
  });
  if (!launcher.supported || launcher.triple === null)
    throw new NoFmhaBwdInstanceError(warning || 'fmha bwd: no instance for these traits');
  const kernels = fmhaBwdKernelsOf(launcher.triple, {
    dqDkDv: catalog.dqDkDv,
    dotDoO: FMHA_BWD_DOT_DO_O_CATALOG,
    convertDq: FMHA_BWD_CONVERT_DQ_CATALOG,
  });
  const applied = kernels.dqDkDv.policy.scoreModifier?.tag;
  if (applied !== p.scoreModifier)
    throw new NoFmhaBwdInstanceError(
      `fmha bwd: the selected dq_dk_dv ${kernels.dqDkDv.name} applies ${applied ?? 'no score modifier'}, the problem ${p.scoreModifier ?? 'none'}`,
    );
  return { launcher, kernels };
}
