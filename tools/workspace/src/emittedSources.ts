// Every kernel instance the catalogs ship, with the sha256 of the exact CUDA / HIP source it emits
// for its target (`instance.source()`, what the launchers and the *.compile.spec.ts tests hand to
// the compiler). The committed manifest of these hashes (emitted-sources.sha256.json, checked by
// emittedSources.spec.ts) is the safety net of refactors that must not change any kernel.
import { createHash } from 'node:crypto';
import {
  FMHA_BWD_CONVERT_DQ_CATALOG,
  FMHA_BWD_DOT_DO_O_CATALOG,
  FMHA_BWD_DQ_DK_DV_CATALOG,
  FMHA_BWD_SCORE_MOD_CATALOG,
} from '@tilekit/kernel-fmha-bwd';
import {
  FMHA_FWD_CATALOG,
  FMHA_FWD_OUTPUT_SPLIT_CATALOG,
  FMHA_FWD_PINGPONG_CATALOG,
  FMHA_FWD_SCORE_MOD_CATALOG,
  FMHA_FWD_COMBINE_CATALOG,
  FMHA_FWD_SM80_CATALOG,
  FMHA_FWD_SM80_CATALOG_SM90A,
  FmhaFwdSm80Instance,
} from '@tilekit/kernel-fmha-fwd';
import {
  DSA_INDEX_CACHE_WRITER_CATALOG,
  DSA_MLA_CACHE_WRITER_CATALOG,
  DSA_SPARSE_MLA_PREFILL_CATALOG,
  DSA_SPARSE_MLA_DECODE_CATALOG,
  DSA_SPARSE_MLA_COMBINE,
  DSA_INDEXER_DECODE_CATALOG,
  DSA_INDEXER_PREFILL_CATALOG,
  DSA_TOPK_CATALOG,
  DSA_TOPK_CLUSTER_CATALOG,
  DSA_TOPK_TWO_READ_CATALOG,
} from '@tilekit/kernel-dsa';
import { GEMM_CATALOG, GEMM_GFX942_CATALOG, GEMM_SM80_CATALOG, GEMM_SM80_CATALOG_SM90A } from '@tilekit/kernel-gemm';
import { PERMUTE_CATALOG } from '@tilekit/kernel-permute';
import {
  FFPA_BWD_CATALOG,
  FFPA_BWD_CONVERT_DQ_CATALOG,
  FFPA_BWD_DOT_DO_O_CATALOG,
  FFPA_BWD_SM90_CATALOG,
  FFPA_CATALOG,
  FFPA_SM80_CATALOG,
} from '@tilekit/kernel-ffpa';
import {
  SPARGE_FWD_CATALOG,
  SPARGE_KEY_MEAN_FINALIZE_CATALOG,
  SPARGE_KEY_MEAN_PARTIAL_CATALOG,
  SPARGE_POOL_CATALOG,
  SPARGE_SELECT_CATALOG,
} from '@tilekit/kernel-sparge';

/** What the manifest needs of an instance: its entry name, its target and its emitted source. */
export interface EmittingInstance {
  readonly name: string;
  readonly signature: { readonly target: { readonly name: string } };
  source(): string;
}

/** One instance list, labelled for the summary (`fmha-fwd sm90`, `gemm gfx942`…). */
export interface EmittedSourceCatalog {
  readonly catalog: string;
  readonly instances: readonly EmittingInstance[];
}

/** One manifest entry: an instance, the target it is emitted for and the sha256 (hex) of its source. */
export interface EmittedSourceEntry {
  readonly name: string;
  readonly target: string;
  readonly sha256: string;
}

/**
 * The sm_80 attention-forward pipeline variants outside the catalog that
 * kernels/fmha-fwd/src/sm80/fmhaFwdSm80Catalog.compile.spec.ts also compiles (4 warps, Q re-read
 * from shared memory, head dims 32 and 256): the only paths of that pipeline no catalog instance takes.
 */
const FMHA_FWD_SM80_VARIANTS: readonly EmittingInstance[] = [
  new FmhaFwdSm80Instance({ dtype: 'bf16', headDim: 256, headDimV: 256, tileM: 128, tileN: 32, qResidence: 'shared', mask: 'window' }),
  new FmhaFwdSm80Instance({ dtype: 'fp16', headDim: 32, headDimV: 32, tileM: 64, tileN: 64, qResidence: 'registers', mask: 'window' }),
  new FmhaFwdSm80Instance({ dtype: 'fp16', headDim: 128, headDimV: 128, tileM: 64, tileN: 64, qResidence: 'shared', mask: 'none' }),
];

/** Every catalog of the kernel packages, for every target it is built for. */
export const EMITTED_SOURCE_CATALOGS: readonly EmittedSourceCatalog[] = [
  { catalog: 'fmha-fwd sm90', instances: FMHA_FWD_CATALOG },
  { catalog: 'fmha-fwd sm90 score modifiers', instances: FMHA_FWD_SCORE_MOD_CATALOG },
  { catalog: 'fmha-fwd sm90 ping-pong', instances: FMHA_FWD_PINGPONG_CATALOG },
  { catalog: 'fmha-fwd sm90 output split', instances: FMHA_FWD_OUTPUT_SPLIT_CATALOG },
  { catalog: 'fmha-fwd combine', instances: FMHA_FWD_COMBINE_CATALOG },
  { catalog: 'fmha-fwd sm80', instances: FMHA_FWD_SM80_CATALOG },
  { catalog: 'fmha-fwd sm80 (built for sm_90a)', instances: FMHA_FWD_SM80_CATALOG_SM90A },
  { catalog: 'fmha-fwd sm80 compile-spec variants', instances: FMHA_FWD_SM80_VARIANTS },
  { catalog: 'fmha-bwd dq_dk_dv', instances: FMHA_BWD_DQ_DK_DV_CATALOG },
  { catalog: 'fmha-bwd dq_dk_dv score modifiers', instances: FMHA_BWD_SCORE_MOD_CATALOG },
  { catalog: 'fmha-bwd dot_do_o', instances: FMHA_BWD_DOT_DO_O_CATALOG },
  { catalog: 'fmha-bwd convert_dq', instances: FMHA_BWD_CONVERT_DQ_CATALOG },
  { catalog: 'ffpa sm90', instances: FFPA_CATALOG },
  { catalog: 'ffpa sm80 (built for sm_90a)', instances: FFPA_SM80_CATALOG },
  { catalog: 'ffpa bwd (built for sm_90a)', instances: FFPA_BWD_CATALOG },
  { catalog: 'ffpa bwd sm90', instances: FFPA_BWD_SM90_CATALOG },
  { catalog: 'ffpa bwd dot_do_o', instances: FFPA_BWD_DOT_DO_O_CATALOG },
  { catalog: 'ffpa bwd convert_dq', instances: FFPA_BWD_CONVERT_DQ_CATALOG },
  { catalog: 'sparge attention', instances: SPARGE_FWD_CATALOG },
  { catalog: 'sparge pool', instances: SPARGE_POOL_CATALOG },
  { catalog: 'sparge key-mean partial', instances: SPARGE_KEY_MEAN_PARTIAL_CATALOG },
  { catalog: 'sparge key-mean finalize', instances: SPARGE_KEY_MEAN_FINALIZE_CATALOG },
  { catalog: 'sparge select', instances: SPARGE_SELECT_CATALOG },
  { catalog: 'dsa index-key cache writer', instances: DSA_INDEX_CACHE_WRITER_CATALOG },
  { catalog: 'dsa indexer decode', instances: DSA_INDEXER_DECODE_CATALOG },
  { catalog: 'dsa indexer prefill', instances: DSA_INDEXER_PREFILL_CATALOG },
  { catalog: 'dsa top-k', instances: DSA_TOPK_CATALOG },
  { catalog: 'dsa top-k cluster', instances: DSA_TOPK_CLUSTER_CATALOG },
  { catalog: 'dsa top-k two-read', instances: DSA_TOPK_TWO_READ_CATALOG },
  { catalog: 'dsa MLA cache writer', instances: DSA_MLA_CACHE_WRITER_CATALOG },
  { catalog: 'dsa sparse MLA prefill', instances: DSA_SPARSE_MLA_PREFILL_CATALOG },
  { catalog: 'dsa sparse MLA decode', instances: DSA_SPARSE_MLA_DECODE_CATALOG },
  { catalog: 'dsa sparse MLA combine', instances: [DSA_SPARSE_MLA_COMBINE] },
  { catalog: 'gemm sm90', instances: GEMM_CATALOG },
  { catalog: 'gemm sm80', instances: GEMM_SM80_CATALOG },
  { catalog: 'gemm sm80 (built for sm_90a)', instances: GEMM_SM80_CATALOG_SM90A },
  { catalog: 'gemm gfx942', instances: GEMM_GFX942_CATALOG },
  { catalog: 'permute', instances: PERMUTE_CATALOG },
];

/** The sha256 (hex) of `text` as UTF-8: the bytes the compiler reads. */
export function sha256Of(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The manifest key of an entry: name and target (one instance may be built for several targets). */
export function entryKey(entry: { readonly name: string; readonly target: string }): string {
  return `${entry.name} (${entry.target})`;
}

function compareEntries(a: EmittedSourceEntry, b: EmittedSourceEntry): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.target !== b.target) return a.target < b.target ? -1 : 1;
  return 0;
}

/** One instance's entry: emits its source once and hashes it. */
export function emittedSourceEntry(instance: EmittingInstance): EmittedSourceEntry {
  return { name: instance.name, target: instance.signature.target.name, sha256: sha256Of(instance.source()) };
}

/** The entries of every instance of `catalogs`, sorted by name then target (code-point order, locale-free). */
export function emittedSources(catalogs: readonly EmittedSourceCatalog[] = EMITTED_SOURCE_CATALOGS): EmittedSourceEntry[] {
  return catalogs.flatMap((c) => c.instances.map(emittedSourceEntry)).sort(compareEntries);
}

/** The keys (name and target) that occur more than once in `entries`, each once, sorted. */
export function duplicateKeys(entries: readonly { readonly name: string; readonly target: string }[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const key of entries.map(entryKey)) (seen.has(key) ? twice : seen).add(key);
  return [...twice].sort();
}

/** One line per catalog and target: `<catalog> <target>: <count>`, without emitting any source. */
export function catalogSummary(catalogs: readonly EmittedSourceCatalog[] = EMITTED_SOURCE_CATALOGS): string[] {
  return catalogs.flatMap((c) => {
    const counts = new Map<string, number>();
    for (const i of c.instances) counts.set(i.signature.target.name, (counts.get(i.signature.target.name) ?? 0) + 1);
    return [...counts].map(([target, n]) => `${c.catalog} ${target}: ${n}`);
  });
}
