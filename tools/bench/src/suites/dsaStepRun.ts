// Our side of a dsa decode-step case: the server's inputs (REFERENCE_OPS.md dsa_decode_step) uploaded, the step
// packed by kernels/dsa's packDsaDecodeStep (indexer → top-k to cache slots → sparse MLA decode, split + combine
// for small batches), its launches captured as one CUDA graph and the replay timed back to back. Then our logits,
// out and lse go to the server (our slots as aux: it judges out/lse over them), and two checks of our own: the
// slots are exactly the top-k of our logits (through the block table), and a sample of query rows lies within the
// kernel's error bound of the float64 reference over those slots.
import {
  checkDsaDecodeStepConfig,
  DSA_MLA_PAGE_BYTES,
  DSA_PAGE_BYTES,
  DSA_PAGE_TOKENS,
  DSA_SPARSE_MLA_QK_DIM,
  DSA_SPARSE_MLA_SM_SCALE,
  DSA_SPARSE_MLA_V_DIM,
  DsaLaunchSequence,
  dsaDecodeStepWorkspaceBytes,
  packDsaDecodeStep,
} from '@tilekit/kernel-dsa';
import { encodeTensorMapTiled, type Compiler, type Device, type DeviceBuffer, type DeviceRange } from '@tilekit/runtime';
import type { CaseContext, OurCaseResult, OwnCheck } from '../benchSuite.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { dsaMeasurement } from './dsaMeasurement.ts';
import { dsaMlaDecodeSampleCheck } from './dsaMlaSample.ts';
import type { DsaStepBenchSpec } from './dsaStepCases.ts';
import { dsaTopkCheck } from './dsaTopkCheck.ts';
import { readCaseInput } from './readCaseInput.ts';
import { typedView } from './typedView.ts';
import { withHeldBuffersAsync } from './withHeldBuffers.ts';

/** A step's inputs as the server wrote them (raw bytes, shapes checked). */
interface DsaStepHost {
  readonly indexQ: Uint8Array;
  readonly indexWeights: Uint8Array;
  readonly indexCache: Uint8Array;
  readonly blockTable: Int32Array;
  readonly contextLens: Uint8Array;
  readonly q: Uint16Array;
  readonly mlaCache: Uint8Array;
}

/** Pages of both caches: every sequence's own, plus the server's spare page (never referenced). */
export function dsaStepPages(spec: DsaStepBenchSpec): { readonly maxPages: number; readonly numPages: number } {
  const maxPages = Math.ceil(spec.L / DSA_PAGE_TOKENS);
  return { maxPages, numPages: spec.b * maxPages + 1 };
}

function readHost(ctx: CaseContext, spec: DsaStepBenchSpec): DsaStepHost {
  const { b, sQ, indexHeads: h, hQ } = spec;
  const { maxPages, numPages } = dsaStepPages(spec);
  return {
    indexQ: readCaseInput(ctx, 'index_q', 'uint8', [b, sQ, h, 128]),
    indexWeights: readCaseInput(ctx, 'index_weights', 'fp32', [b * sQ, h]),
    indexCache: readCaseInput(ctx, 'index_cache', 'uint8', [numPages, DSA_PAGE_BYTES]),
    blockTable: typedView(readCaseInput(ctx, 'block_table', 'int32', [b, maxPages]), Int32Array),
    contextLens: readCaseInput(ctx, 'context_lens', 'int32', [b]),
    q: typedView(readCaseInput(ctx, 'q', 'bf16', [b, sQ, hQ, DSA_SPARSE_MLA_QK_DIM]), Uint16Array),
    mlaCache: readCaseInput(ctx, 'mla_cache', 'uint8', [numPages, DSA_MLA_PAGE_BYTES]),
  };
}

/**
 * The context positions [rows][topk] of cache slots [rows][topk] (row r is sequence ⌊r / sQ⌋'s): the slot's page
 * looked up in that sequence's block-table row; −2 for a slot whose page is not the sequence's (never a position).
 */
export function dsaStepPositions(slots: Int32Array, blockTable: Int32Array, maxPages: number, sQ: number, topk: number): Int32Array {
  const owner = new Map<number, number>();
  for (let i = 0; i < blockTable.length; i++) owner.set(blockTable[i]!, i);
  const out = new Int32Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    const at = slot < 0 ? undefined : owner.get(Math.floor(slot / DSA_PAGE_TOKENS));
    const sequence = Math.floor(Math.floor(i / topk) / sQ);
    out[i] =
      at === undefined || Math.floor(at / maxPages) !== sequence
        ? slot === -1
          ? -1
          : -2
        : (at % maxPages) * DSA_PAGE_TOKENS + (slot % DSA_PAGE_TOKENS);
  }
  return out;
}

/** Copies the bytes at `range` (inside `buffer`) to `host`. */
function readRange(buffer: DeviceBuffer, range: DeviceRange, host: Int32Array | Float32Array): void {
  buffer.copyToHost(host, { offset: Number(range.ptr - buffer.ptr) });
}

/** Times one decode step case as a CUDA graph and returns the measurement, the outputs for the server and our checks. */
export async function runDsaStep(device: Device, compiler: Compiler, spec: DsaStepBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const host = readHost(ctx, spec);
  const { maxPages, numPages } = dsaStepPages(spec);
  const c = checkDsaDecodeStepConfig({
    ...{ batch: spec.b, nextN: spec.sQ, indexHeads: spec.indexHeads, maxContext: spec.L, maxPages, numPages },
    ...{ hQ: spec.hQ, topk: spec.topk, smScale: DSA_SPARSE_MLA_SM_SCALE, hasSink: false },
  });
  const rows = spec.b * spec.sQ;
  return withHeldBuffersAsync(device, async (hold) => {
    const up = (view: ArrayBufferView): DeviceBuffer => hold(device.upload(view));
    const alloc = (bytes: number, what: string): DeviceBuffer => hold(device.alloc(bytes, what).fill(0xa5));
    const buffers = {
      ...{ indexQ: up(host.indexQ), indexWeights: up(host.indexWeights), indexCache: up(host.indexCache) },
      ...{ blockTable: up(host.blockTable), contextLens: up(host.contextLens), q: up(host.q), mlaCache: up(host.mlaCache) },
      out: alloc(rows * spec.hQ * DSA_SPARSE_MLA_V_DIM * 2, 'dsa step out'),
      lse: alloc(rows * spec.hQ * 4, 'dsa step lse'),
      maxLogits: alloc(rows * spec.hQ * 4, 'dsa step max_logits'),
      workspace: alloc(dsaDecodeStepWorkspaceBytes(c, device.smCount), 'dsa step workspace'),
    };
    const packed = packDsaDecodeStep(c, buffers, { encode: (m) => encodeTensorMapTiled(device, m), smCount: device.smCount });
    const seq = await DsaLaunchSequence.build(packed.launches, { device, compiler });
    const stream = device.createStream();
    const graph = seq.capture(stream);
    try {
      const timing = measureLaunches(device, () => graph.launch(), ctx.timing, stream);
      device.synchronize();
      const got = {
        logits: new Float32Array(rows * spec.L),
        slots: new Int32Array(rows * spec.topk),
        out: buffers.out.copyToHost(new Uint16Array(rows * spec.hQ * DSA_SPARSE_MLA_V_DIM)),
        lse: buffers.lse.copyToHost(new Float32Array(rows * spec.hQ)),
        maxLogits: buffers.maxLogits.copyToHost(new Float32Array(rows * spec.hQ)),
      };
      readRange(buffers.workspace, packed.logits, got.logits);
      readRange(buffers.workspace, packed.slots, got.slots);
      const positions = dsaStepPositions(got.slots, host.blockTable, maxPages, spec.sQ, spec.topk);
      const checks: Record<string, OwnCheck> = {
        'top-k of our logits': dsaTopkCheck(got.logits, rows, spec.L, spec.topk, positions),
        'sampled query rows': dsaMlaDecodeSampleCheck(
          {
            b: spec.b,
            sQ: spec.sQ,
            hQ: spec.hQ,
            topk: spec.topk,
            smScale: DSA_SPARSE_MLA_SM_SCALE,
            q: host.q,
            cache: host.mlaCache,
            indices: got.slots,
          },
          got,
        ),
      };
      const names = packed.launches.map((l) => l.instance.name).join(' → ');
      return {
        ours: dsaMeasurement(timing, names),
        outputs: {
          logits: ctx.writeTensor('logits', 'fp32', [rows, spec.L], got.logits),
          out: ctx.writeTensor('out', 'bf16', [spec.b, spec.sQ, spec.hQ, DSA_SPARSE_MLA_V_DIM], got.out),
          lse: ctx.writeTensor('lse', 'fp32', [spec.b, spec.hQ, spec.sQ], got.lse),
        },
        aux: { slots: ctx.writeTensor('slots', 'int32', [rows, spec.topk], got.slots) },
        checks,
        note: `one CUDA graph of ${packed.launches.length} launches (${names}; ${packed.attention.splits} split(s))`,
      };
    } finally {
      graph.dispose();
      stream.dispose();
      seq.dispose();
    }
  });
}
