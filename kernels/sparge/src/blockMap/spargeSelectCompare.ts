// How a GPU block map is judged against the CPU selection: rows must be equal unless the CPU's
// selection margin there is within fp32 rounding (then the GPU may legitimately pick otherwise).
import { decodeSpargeLut, type SpargeLut } from '../spargeLut.ts';
import type { SpargeSelectReferenceResult } from './spargeSelectReference.ts';

/** What the GPU produced (host copies of its buffers). */
export interface SpargeSelectDeviceResult {
  readonly map: Uint8Array;
  readonly lut: Int32Array;
  readonly validBlockNum: Int32Array;
  /** [b][h] (optional). */
  readonly visited?: Int32Array;
}

/** The verdict of {@link compareSpargeSelect}. */
export interface SpargeSelectComparison {
  readonly rows: number;
  /** Rows whose map differs but whose CPU margins are within rounding. */
  readonly excused: number;
  /** Rows whose map or LUT differs with a clear CPU margin, or whose GPU LUT does not encode its GPU map. */
  readonly wrong: number;
  /** A description of the first wrong row (empty when none). */
  readonly first: string;
}

/** Tolerances of the rounding excuse. */
export interface SpargeSelectTolerance {
  /** A score gap below this × (1 + max |Ŝ| of the row) is within fp32 rounding (default 1e-4). */
  readonly score?: number;
  /** A cdf distance below this is within fp32 rounding (default 1e-4). */
  readonly mass?: number;
  /** Rows excused whatever their margins (e.g. a block similarity within rounding of simthreshd1). */
  readonly excuseRow?: (row: number) => boolean;
}

/**
 * Compares the GPU's map, LUT, valid counts (and visited counts) with the CPU's, row by row.
 * A row is excused when its maps differ and scoreMargin < score·(1 + scale) or massMargin < mass;
 * every other row must have the same map, the same LUT row and the same count, and every GPU row
 * (excused or not) must decode (its LUT gives back its map). visited[b·h] must equal the sum of
 * the GPU's counts; it must equal the CPU's where no row of that (b, h) is excused.
 */
export function compareSpargeSelect(
  ref: SpargeSelectReferenceResult,
  gpu: SpargeSelectDeviceResult,
  tolerance: SpargeSelectTolerance = {},
): SpargeSelectComparison {
  const scoreTol = tolerance.score ?? 1e-4;
  const massTol = tolerance.mass ?? 1e-4;
  const { kBlocksMax: KM, qBlocksMax: QM } = ref.grid;
  const rows = ref.lut.validBlockNum.length;
  const bh = rows / QM;
  let excused = 0;
  let wrong = 0;
  let first = '';
  const excusedBh = new Uint8Array(bh);
  const fail = (why: string): void => {
    wrong++;
    if (first === '') first = why;
  };
  const gpuLut: SpargeLut = { batch: 1, nhead: 1, qBlocks: rows, kBlocks: KM, lut: gpu.lut, validBlockNum: gpu.validBlockNum };
  let decoded: Uint8Array | null = null;
  try {
    decoded = decodeSpargeLut(gpuLut).map;
  } catch (error) {
    fail(`GPU LUT does not decode: ${(error as Error).message}`);
  }
  for (let r = 0; r < rows; r++) {
    const at = r * KM;
    let mapDiffers = false;
    let lutDiffers = gpu.validBlockNum[r] !== ref.lut.validBlockNum[r];
    for (let j = 0; j < KM; j++) {
      if (gpu.map[at + j] !== ref.map[at + j]) mapDiffers = true;
      if (gpu.lut[at + j] !== ref.lut.lut[at + j]) lutDiffers = true;
      if (decoded !== null && decoded[at + j] !== gpu.map[at + j]) {
        fail(`row ${r}: GPU LUT decodes to ${decoded[at + j]} at key block ${j}, GPU map has ${gpu.map[at + j]}`);
        break;
      }
    }
    if (!mapDiffers && !lutDiffers) continue;
    const closeScore = ref.scoreMargin[r]! < scoreTol * (1 + ref.scoreScale[r]!);
    const closeMass = ref.massMargin[r]! < massTol;
    if (mapDiffers && (closeScore || closeMass || tolerance.excuseRow?.(r) === true)) {
      excused++;
      excusedBh[Math.floor(r / QM)] = 1;
      continue;
    }
    const ones = (m: Uint8Array): string =>
      Array.from(m.subarray(at, at + KM))
        .flatMap((v, j) => (v ? [j] : []))
        .join(',');
    fail(
      `row ${r} (b·h ${Math.floor(r / QM)}, i ${r % QM}): GPU [${ones(gpu.map)}] count ` +
        `${gpu.validBlockNum[r]}, CPU [${ones(ref.map)}] count ${ref.lut.validBlockNum[r]} ` +
        `(score margin ${ref.scoreMargin[r]}, mass margin ${ref.massMargin[r]})`,
    );
  }
  if (gpu.visited !== undefined) {
    for (let x = 0; x < bh; x++) {
      let sum = 0;
      for (let i = 0; i < QM; i++) sum += gpu.validBlockNum[x * QM + i]!;
      if (gpu.visited[x] !== sum) fail(`visited[${x}] = ${gpu.visited[x]}, the GPU counts sum to ${sum}`);
      else if (excusedBh[x] === 0 && gpu.visited[x] !== ref.visited[x]) fail(`visited[${x}] = ${gpu.visited[x]}, CPU ${ref.visited[x]}`);
    }
  }
  return { rows, excused, wrong, first };
}
