// The compute-sanitizer plan (`npm run test:sanitize`, tools/device/run-sanitize.mjs): per kernel
// family, which GPU test bundles (.device/gpu-tests/<package>-<spec>.mjs) run in one process and which
// of their tests. The sanitizers slow kernels 10–1000×, so each family picks SMALL ragged cases
// from the existing *.gpu.spec.ts files (keys in the hundreds; the few s1000+ picks below say why
// they are cheap), each covering a path the others do not: varlen with empty sequences, both mask
// alignments and windows, GQA, LSE, split-KV and its combine kernel, atomic and deterministic dQ,
// d256, both Sparge pipelines and every P·V vote mode, int8, every GEMM kind, every permute
// instance, the runtime and codegen primitives. The tool loop runs every family under memcheck,
// racecheck, synccheck and initcheck; the whole plan is meant to stay under ~8 minutes on an H100.
//
// A selector is a test's exact name (a string) or `{ prefix }` (every test whose name starts so).
// The unit test (tools/device/src/sanitize.spec.ts) bundles the specs and checks that every
// selector matches a test of its own bundle, so a renamed test fails there, not on the GPU machine.

/** The tools, in the order they run, with their compute-sanitizer arguments. */
export const SANITIZER_TOOLS = {
  memcheck: ['--tool', 'memcheck'],
  // Hazard reports name both threads and the kernel of each racing access (analysis reports only lines).
  racecheck: ['--tool', 'racecheck', '--racecheck-report', 'hazard'],
  synccheck: ['--tool', 'synccheck'],
  initcheck: ['--tool', 'initcheck'],
};

const FWD = 'kernel-fmha-fwd/gpu: ';
const FWD_PINGPONG = 'kernel-fmha-fwd/gpu ping-pong: ';
const FWD_OUTPUT_SPLIT = 'kernel-fmha-fwd/gpu output split: ';
const FFPA = 'kernel-ffpa/gpu: ';
const FFPA_SM80 = 'kernel-ffpa/gpu sm80: ';
const FFPA_BWD = 'kernel-ffpa/gpu bwd dq_dk_dv: ';
const FFPA_BWD_RUNNER = 'kernel-ffpa/gpu bwd: ';
const FWD_SM80 = 'kernel-fmha-fwd sm80/gpu: ';
const BWD = 'kernel-fmha-bwd/gpu: ';
const SPARGE = 'kernel-sparge/gpu attention: ';
const SELECT = 'kernel-sparge/gpu select: ';
const DSA_INDEXER = 'kernel-dsa/gpu indexer: ';
const DSA_TOPK = 'kernel-dsa/gpu topk: ';
const DSA_TOPK_TWO_READ = 'kernel-dsa/gpu topk two-read: ';
const DSA_MLA_CACHE = 'kernel-dsa/gpu mla cache writer: ';
const DSA_SPARSE_MLA = 'kernel-dsa/gpu sparse MLA prefill: ';
const DSA_SPARSE_MLA_DECODE = 'kernel-dsa/gpu sparse MLA decode: ';
const DSA_STEP = 'kernel-dsa/gpu decode step: ';

/** The families, in the order they run. */
export const SANITIZE_PLAN = [
  {
    family: 'fmhaFwd',
    covers:
      'sm90 forward: batch and group mode with empty sequences, no mask, causal both ' +
      'alignments, fully masked rows, window, GQA, LSE, d32/64/128/256; split-KV partials and ' +
      'the combine kernel; soft-capping and ALiBi; the ping-pong schedule (turns on named barriers); ' +
      'O split across warpgroups (d_v 512)',
    bundles: {
      'kernel-fmha-fwd-fmhaFwd.mjs': [
        `${FWD}fp16 d128 no mask, b2 h2 s259, bhsd`,
        `${FWD}fp16 d128 causal bottom-right sq259 > sk100: the first 159 rows fully masked`,
        `${FWD}fp16 d128 sliding window t:17,5 s127`,
        `${FWD}bf16 d128 varlen q 1,17,0,127,259 k 17,1,5,127,300, bshd, GQA 4:1`,
        `${FWD}fp16 d128 varlen causal bottom-right q 17,259 k 259,17`,
        `${FWD}fp16 d64 causal s259`,
        `${FWD}bf16 d256 causal s259`,
        `${FWD}fp16 d32 no mask s17`,
        `${FWD}fp16 d128 soft-capping, causal bottom-right varlen q 17,300,0 k 259,300,5`,
        `${FWD}fp16 d128 ALiBi, window t:40,3, varlen q 1,259 k 300,259, GQA 4:2`,
      ],
      // sk 259/300: the split spec's own small cases (its decode cases have 4097+ keys).
      'kernel-fmha-fwd-fmhaFwdSplit.mjs': [{ prefix: 'kernel-fmha-fwd/gpu split-KV: small: ' }],
      'kernel-fmha-fwd-fmhaFwdPingPong.mjs': [
        `${FWD_PINGPONG}bf16 d128 window t:40,3 varlen q 17,0,127 k 259,5,127`,
        `${FWD_PINGPONG}bf16 d64 causal s259 GQA 4:1`,
      ],
      'kernel-fmha-fwd-fmhaFwdOutputSplit.mjs': [
        `${FWD_OUTPUT_SPLIT}fp16 d64/dv512 window t:40,3 varlen q 17,0,259 k 300,5,259`,
        `${FWD_OUTPUT_SPLIT}bf16 d64/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1`,
      ],
      'kernel-fmha-fwd-fmhaFwdRunnerScoreMod.mjs': [
        'kernel-fmha-fwd/gpu runner score modifier: soft-capping, causal bottom-right varlen q 17,0,259 k 259,5,300, GQA 4:2, bshd',
      ],
    },
  },
  {
    family: 'ffpa',
    covers:
      'FFPA large head dims: Q·Kᵀ streamed in head-dim chunks, P handed between warpgroups on ' +
      'per-thread mbarriers (d 384 … 576), O in column slices across CTAs (d 576/576, 704, 1024), a ' +
      'cluster of two CTAs exchanging partial S through distributed shared memory (d 640), varlen ' +
      'with empty sequences, windows, fully masked rows, GQA; the sm_80 path (FFPA L1: cp.async ring of ' +
      'Q/K and V chunks, 256-column slices); the backward dq_dk_dv kernel (S and dP recomputed in 64-column ' +
      'chunks, 128-column slices, dQ by atomics into the workspace) and its sm_90a kernel (clusters of 2 or 4 CTAs ' +
      'exchanging partial Sᵀ/dPᵀ through distributed shared memory, TMA, wgmma, dQ by TMA bulk reductions, in key order when deterministic)',
    bundles: {
      'kernel-ffpa-ffpa.mjs': [
        `${FFPA}bf16 d512 window t:40,3 varlen q 17,0,127 k 300,5,127`,
        `${FFPA}fp16 d384 no mask varlen q 1,0,300 k 17,3,300`,
        `${FFPA}fp16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1`,
        `${FFPA}bf16 d576/dv576 window t:40,3 varlen q 17,0,127 k 300,0,127 (320 + 256 columns)`,
        `${FFPA}fp16 d704 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1 (384 + 320 columns)`,
        `${FFPA}fp16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259`,
        `${FFPA}bf16 d640 no mask b2 h2 s259`,
        `${FFPA_SM80}bf16 d512 window t:40,3 varlen q 17,0,127 k 300,5,127`,
        `${FFPA_SM80}fp16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:1`,
        `${FFPA_SM80}fp16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259`,
      ],
      'kernel-ffpa-ffpaBwdDqDkDv.mjs': [
        `${FFPA_BWD}bf16 d576/dv512 causal bottom-right sq259 > sk100: fully masked rows, GQA 4:2`,
        `${FFPA_BWD}fp16 d384 window t:40,3 varlen q 17,0,127 k 300,5,127`,
        `${FFPA_BWD}bf16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259`,
      ],
      'kernel-ffpa-ffpaBwd.mjs': [
        `${FFPA_BWD_RUNNER}fp16 d384 window t:40,3 varlen q 17,0,127 k 300,5,127`,
        `${FFPA_BWD_RUNNER}sm90 bf16 d512 causal bottom-right varlen q 17,0,127 k 17,5,259, GQA 2:1`,
        `${FFPA_BWD_RUNNER}sm90 bf16 d1024 causal top-left varlen q 17,0,127,1 k 17,3,127,259, bshd (4-CTA cluster)`,
        `${FFPA_BWD_RUNNER}sm90 deterministic fp16 d1024 window t:100,20 varlen q 17,0,259 k 300,5,259, bshd (4-CTA cluster, key-ordered dQ)`,
      ],
    },
  },
  {
    family: 'fmhaFwdSm80',
    covers:
      'sm_80 forward (built for the device): varlen with an empty sequence, windows that fully ' +
      'mask rows, GQA without LSE, d64/128, the d256 variant with Q in shared memory',
    bundles: {
      'kernel-fmha-fwd-fmhaFwdSm80.mjs': [
        `${FWD_SM80}fp16 d128 no mask, b2 h2 s259, bhsd`,
        `${FWD_SM80}fp16 d128 sliding window t:17,5 s127`,
        `${FWD_SM80}fp16 d64 sliding window b:3,2 sq127 sk17: the first rows fully masked`,
        `${FWD_SM80}fp16 d64 varlen causal bottom-right q 17,0,259 k 259,3,17, bhsd`,
        `${FWD_SM80}bf16 d64 no mask sq17 sk127 (GQA 4:1), no LSE`,
        `${FWD_SM80}variant bf16 d256 (Q in shared memory, 128×32 tiles) causal bottom-right sq259 sk300`,
      ],
    },
  },
  {
    family: 'fmhaBwd',
    covers:
      'backward: dot_do_o, dq_dk_dv and convert_dq with atomic and deterministic dQ ' +
      '(batch-mode persistent splits, group-mode per-batch splits), varlen with empty ' +
      'sequences, GQA, causal both alignments, fully masked rows, window; dq_dk_dv alone at ' +
      'd256 and with soft-capping and ALiBi',
    bundles: {
      'kernel-fmha-bwd-fmhaBwd.mjs': [
        `${BWD}fp16 d128 causal bottom-right sq259 > sk100: fully masked rows`,
        `${BWD}bf16 d128 varlen q 1,17,0,127,259 k 17,1,5,127,300, GQA 4:1 (atomic)`,
        `${BWD}bf16 d64 varlen causal top-left q 300,0,64 k 300,64,64 bshd (atomic)`,
        `${BWD}fp16 d128 no mask b2 h2 s259 (deterministic, persistent splits)`,
        `${BWD}fp16 d128 varlen q 1,17,0,127,259 k 17,1,0,127,300, GQA 4:2 (deterministic group mode: per-batch splits, no zeroing)`,
        `${BWD}fp16 d64 varlen causal bottom-right q 17,259,1 k 259,17,1 (deterministic, masked: zeroed)`,
        `${BWD}bf16 d128 sliding window t:17,5 s300 (deterministic)`,
      ],
      'kernel-fmha-bwd-_dqDkDv.mjs': [
        'kernel-fmha-bwd/gpu dq_dk_dv: bf16 d256 causal s300 GQA 4:2 (two warpgroups share 64 key rows)',
        'kernel-fmha-bwd/gpu dq_dk_dv: fp16 d256 varlen q 1,0,130 k 65,7,200, window t:40,3',
        'kernel-fmha-bwd/gpu dq_dk_dv: fp16 d128 soft-capping 1.5, varlen causal q 17,300 k 259,300',
        'kernel-fmha-bwd/gpu dq_dk_dv: fp16 d128 ALiBi, window t:40,3, varlen q 1,259 k 300,259, GQA 4:2',
      ],
      'kernel-fmha-bwd-fmhaBwdRunnerScoreMod.mjs': [
        'kernel-fmha-bwd/gpu runner score modifier: ALiBi, window t:40,3 varlen q 1,259,0 k 300,259,17, GQA 4:2, bshd',
      ],
    },
  },
  {
    family: 'spargeBlockMap',
    covers:
      'Sparge block map: K mean, pooling with self-similarity and int8 quantization (tails, ' +
      'GQA, bshd, group mode with empty sequences, upstreamFix, 64×128 blocks), selection ' +
      '(topk and cdf, causal, sink, fix blocks, ties, kBlocks 1, group mode)',
    bundles: {
      'kernel-sparge-spargePool.mjs': [
        'sparge pool: fp16 d128 s17',
        'sparge pool: fp16 d128 s259',
        'sparge pool: bf16 d64 64x128 GQA smoothK int8',
        'sparge pool: fp16 d64 bshd GQA',
        'sparge pool: fp16 d128 upstreamFix',
        'sparge pool: fp16 d128 group small: q 17,0,259 k 127,1,0 (empty sequences), GQA 2:1',
        'sparge pool: bf16 d64 group bshd no smoothK upstreamFix',
      ],
      // The selection works on pooled blocks (s / 64 rows of s / 64 candidates): s1000-1500 is tiny work.
      'kernel-sparge-spargeSelect.mjs': [
        `${SELECT}topk per head, causal, sink, fix blocks, ties, partial tails (s1000, 128×64, d128)`,
        `${SELECT}cdf per head, no sink, GQA 4:2, d64, 64×128, sq 777 < sk 1500`,
        `${SELECT}topk 1.0 and tiny (n promoted to 1), sink off, kBlocks 1 (sk 10)`,
        `${SELECT}group mode varlen q 300,0,129,64 k 200,64,0,1000, GQA 4:1, causal, cdf`,
        `${SELECT}group mode varlen topk, sink off, k 1,65,640`,
      ],
    },
  },
  {
    family: 'spargeAttention',
    covers:
      'Sparge sparse attention: vsa and jenga pipelines × P·V vote none/warp/block (at +∞ and ' +
      'firing), empty query blocks, GQA, varlen with an empty sequence, int8 Q·Kᵀ',
    bundles: {
      'kernel-sparge-spargeFwd.mjs': [
        ...['vsa', 'jenga'].flatMap((p) => [
          `${SPARGE}${p} fp16 d128 b1 h2 s259 causal, empty query block 1, no skip`,
          `${SPARGE}${p} bf16 d64 b1 h2 s259 causal density 0.6, warp mode with +∞`,
          `${SPARGE}${p} fp16 d64 b1 h4 hk2 s127 every block (dense), block mode with +∞`,
          `${SPARGE}${p} bf16 d128 varlen 1,17,0,259 causal density 0.5, block mode with +∞`,
        ]),
        `${SPARGE}vsa fp16 d128 b1 h2 s259 int8 Q·Kᵀ density 0.5`,
        `${SPARGE}jenga bf16 d64 b1 h4 hk2 s259 causal int8 Q·Kᵀ, block mode with +∞`,
        `${SPARGE}vsa fp16 d128 b1 h2 s512 synthetic, warp vote, pvThreshold 6 / 10`,
        `${SPARGE}jenga fp16 d64 b1 h2 s512 synthetic causal, block vote, pvThreshold 8`,
      ],
    },
  },
  {
    family: 'dsa',
    covers:
      'DSA part 1: the index-key cache writer (fp32 and ue8m0 scales), the paged decode indexer (next_n 1 and 2, ' +
      'heads 32 and 64, empty contexts, partial pages: TMA page ring, two consumer warpgroups), the prefill indexer ' +
      '(causal and random windows, empty windows, ragged S and Skv), and the top-k selection (short and empty rows, ' +
      '−∞ / NaN / ±0, k above the row, the page-table output), the FP8 MLA latent cache writer (padded pages, strided rows, −1 slots), ' +
      'the sparse MLA prefill (gathered rows in a 4-stage cp.async ring, two consumer warpgroups sharing the row max, P exchanged in shared memory) ' +
      'the FP8-cache sparse MLA decode (dequantizing producer, split partials and the combine) and the whole decode step',
    bundles: {
      'kernel-dsa-dsaIndexer.mjs': [
        `${DSA_INDEXER}decode B3 n1 H64 L17 (fp32)`,
        `${DSA_INDEXER}decode B2 n2 H64 L127 (ue8m0)`,
        `${DSA_INDEXER}decode B4 n1 H32 L259 (fp32, min 0)`,
        `${DSA_INDEXER}prefill S17 Skv17 H64 causal (fp32)`,
        `${DSA_INDEXER}prefill S127 Skv259 H32 random (ue8m0)`,
      ],
      'kernel-dsa-dsaTopk.mjs': [
        `${DSA_TOPK}lengths 0, 1, past the row, negative, 63, 65, 129`,
        `${DSA_TOPK}k 4096 > rowStride 100`,
        `${DSA_TOPK}page table, next_n 1, lengths not multiples of 64, k 7`,
      ],
      // The two-read schedule (launched explicitly): an 8K row with more than k candidates takes its list path, read backward.
      'kernel-dsa-dsaTopkTwoRead.mjs': [
        `${DSA_TOPK_TWO_READ}−∞ runs, NaN, ±0, +∞, 8K, k 2048`,
        `${DSA_TOPK_TWO_READ}k 4096 > rowStride 100`,
      ],
      // The FP8 MLA latent cache writer: padded pages, a strided latent, −1 slots.
      'kernel-dsa-dsaMlaCacheWriter.mjs': [`${DSA_MLA_CACHE}17 tokens, padded pages, latent stride 584, −1 slots`],
      // The sparse MLA prefill: a partial tile, invalid entries with topk_length and empty rows, sinks (4 stages, both head counts).
      'kernel-dsa-dsaSparseMlaPrefill.mjs': [
        `${DSA_SPARSE_MLA}h64 topk 64, sKv 100 (one partial page)`,
        `${DSA_SPARSE_MLA}h64 topk_length, empty rows`,
        `${DSA_SPARSE_MLA}h128 sinks and topk_length`,
      ],
      // The FP8-cache decode: s_q 2 with sinks, empty sequences with invalid slots (each with one split, three and the launcher's).
      'kernel-dsa-dsaSparseMlaDecode.mjs': [
        `${DSA_SPARSE_MLA_DECODE}b3 s_q 1 h128 topk 100, topk_length`,
        `${DSA_SPARSE_MLA_DECODE}b5 s_q 2 h64 empty sequences, 20% invalid`,
      ],
      // The decode step: indexer → top-k to slots → split decode + combine, next_n 2 with short contexts.
      'kernel-dsa-dsaDecodeStep.mjs': [`${DSA_STEP}b3 next_n 2, context 2 … 3000, h_q 64, top-512`],
    },
  },
  {
    family: 'gemm',
    covers:
      'sm90 GEMM: both tiles and vector widths, every layout, fp16 and bf16, an epilogue ' +
      'functor, the persistent loop over several tiles; ragged, m = 1 and batched shapes',
    bundles: {
      'kernel-gemm-gemm.mjs': [
        'gemm/gpu: small shapes (sanitizer size) on one instance per tile, vector width, layout, epilogue and the persistent loop',
      ],
    },
  },
  {
    family: 'gemmSm80',
    covers: 'sm_80 GEMM (built for the device): every catalog instance and the nt/tt layouts on ragged K = 77, m = 1 and batched shapes',
    bundles: {
      'kernel-gemm-gemmSm80.mjs': [
        'gemm sm80/gpu: small shapes (sanitizer size): every catalog instance and nt/tt on ragged K = 77, m = 1 and batched problems',
      ],
    },
  },
  {
    family: 'permute',
    covers: 'every permute instance (head permutes and transposes, every dtype and vector width) on odd shapes with partial tiles',
    bundles: { 'kernel-permute-permute.mjs': ['permute/gpu: every catalog instance matches the CPU reference on odd shapes'] },
  },
  {
    family: 'primitives',
    covers:
      'runtime launches (odd n, clusters, >48 KiB dynamic shared memory), a TMA tile load, ' +
      'codegen intrinsics (TMA load/store, cp.async, ldmatrix), tile load/store and block ' +
      'reductions, the int8/fp16/fp8 wgmma block GEMM',
    bundles: {
      'runtime-kernel.mjs': [
        'runtime/gpu: an nvcc-compiled kernel launches and computes y = a*x + y (odd n)',
        'runtime/gpu: cluster launch through cuLaunchKernelEx',
        'runtime/gpu: setMaxDynamicSharedMemory opens dynamic shared memory beyond 48 KiB',
      ],
      'runtime-tensorMap.mjs': ['runtime/gpu: a TMA descriptor from cuTensorMapEncodeTiled loads a tile (and zero-fills out of bounds)'],
      'codegen-intrinsics.mjs': [{ prefix: 'codegen/intrinsics/gpu: ' }],
      'tile-tile.mjs': [{ prefix: 'tile/gpu: load/store equals' }, { prefix: 'tile/gpu: block reduction equals' }],
      'gemm-blockGemmWgmmaSsInt8.mjs': [{ prefix: 'gemm/gpu: WgmmaBlockGemmSs ' }],
      'gemm-blockGemmWgmmaSsFp8.mjs': [{ prefix: 'gemm/gpu: WgmmaBlockGemmSs ' }],
    },
  },
];

/** Escapes `text` for a RegExp source. */
function escapeRegExp(text) {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** The `--test-name-pattern` source of one selector: the exact name, or the prefix. */
export function selectorPattern(selector) {
  return typeof selector === 'string' ? `^${escapeRegExp(selector)}$` : `^${escapeRegExp(selector.prefix)}`;
}

/** How a selector reads in messages. */
export function selectorLabel(selector) {
  return typeof selector === 'string' ? selector : `${selector.prefix}…`;
}

/** Whether test `name` is one the selector picks (as node:test decides with its pattern). */
export function selectorMatches(selector, name) {
  return new RegExp(selectorPattern(selector)).test(name);
}

/** Every selector of a family, with its bundle. */
export function familySelectors(entry) {
  return Object.entries(entry.bundles).flatMap(([bundle, selectors]) => selectors.map((selector) => ({ bundle, selector })));
}

/** The family entry named `name`, else undefined. */
export function planFamily(name) {
  return SANITIZE_PLAN.find((f) => f.family === name);
}
