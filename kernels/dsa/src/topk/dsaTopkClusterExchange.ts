// What the CTAs of a thread-block cluster exchange through distributed shared memory in the
// cluster top-k kernel: the sum of their radix histograms (a reduce-scatter of the bins, then every
// partial sum pushed to every CTA) and one word per CTA (an all-gather of their selection counts).
// Each exchange is bracketed by cluster barriers, so plain shared::cluster loads and stores suffice.
import {
  add,
  addressOf,
  cast,
  clusterSync,
  index,
  int32,
  lit,
  lt,
  mapaShared,
  mul,
  loadSharedClusterU32,
  storeSharedClusterU32,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';

/** The cluster as one CTA's threads see it. */
export interface DsaTopkClusterSite {
  readonly target: Target;
  /** CTAs per cluster (2 … 8, a power of two). */
  readonly cluster: number;
  readonly threads: number;
  /** int32 thread index in the CTA. */
  readonly tid: Expr;
  /** int32 rank of this CTA in its cluster. */
  readonly rank: Expr;
}

/** Histograms to sum: this CTA's int32 `local` bins and the int32 `reduced` bins every CTA receives the sum in (both in shared memory). */
export interface DsaTopkClusterHistograms {
  readonly local: Expr;
  readonly reduced: Expr;
  /** Bins of each (a multiple of the cluster size). */
  readonly bins: number;
}

/**
 * Emits the cluster-wide histogram sum: a cluster barrier (every CTA's `local` complete and
 * visible), then CTA r adds bins [r · bins / C, (r + 1) · bins / C) over the `local` of every CTA
 * and stores each sum into the `reduced` of every CTA, then a cluster barrier. After it `reduced`
 * holds the cluster's histogram in every CTA, and `local` may be written again. Every thread of
 * every CTA of the cluster must run it.
 */
export function emitDsaTopkClusterHistogramSum(b: BlockBuilder, site: DsaTopkClusterSite, h: DsaTopkClusterHistograms): void {
  const t = site.target;
  const per = h.bins / site.cluster;
  b.comment(`cluster histogram sum: CTA r adds bins [r * ${per}, (r + 1) * ${per}) of every CTA and stores the sums into every CTA`);
  b.expr(clusterSync(t));
  b.forRange({ name: 'j', from: site.tid, to: per, step: site.threads }, (x, j) => {
    const bin = x.let('bin', int32, add(mul(site.rank, per), j));
    const peers = Array.from({ length: site.cluster }, (_, q) =>
      x.let(`part${q}`, uint32, loadSharedClusterU32(t, mapaShared(t, addressOf(index(h.local, bin)), q))),
    );
    const sum = x.let(
      'sum',
      uint32,
      peers.reduce<Expr>((s, p) => add(s, p), lit(0, uint32)),
    );
    for (let q = 0; q < site.cluster; q++) x.expr(storeSharedClusterU32(t, mapaShared(t, addressOf(index(h.reduced, bin)), q), sum));
  });
  b.expr(clusterSync(t));
}

/**
 * Emits the all-gather of one uint32 per CTA (`value`, the same on every thread of the CTA): thread
 * q < C stores it into `slots[rank]` of CTA q, then a cluster barrier; after it `slots[q]` (shared,
 * C words) holds CTA q's value in every CTA. Every thread of every CTA of the cluster must run it.
 */
export function emitDsaTopkClusterAllGather(b: BlockBuilder, site: DsaTopkClusterSite, slots: Expr, value: Expr): void {
  const t = site.target;
  b.if(lt(site.tid, site.cluster), (x) =>
    x.expr(storeSharedClusterU32(t, mapaShared(t, addressOf(index(slots, site.rank)), cast(site.tid, uint32)), value)),
  );
  b.expr(clusterSync(t));
}
