import type { DTypeName } from '@tilekit/numeric';
import { AtomError } from '../errors.ts';
import { hRef, TileDistributionEncoding, type RhRef } from '../tileDistributionEncoding.ts';
import { FragmentAtom } from './fragmentAtom.ts';

/** Arguments of {@link ldmatrixAtom}. */
export interface LdmatrixSpec {
  /** `.x1`, `.x2` or `.x4`: how many 8×8 matrices (one 32-bit register each). */
  readonly num: 1 | 2 | 4;
  /** `.trans`: each 8×8 matrix is read column-major (the register fragment is its transpose). */
  readonly trans?: boolean;
  /** How the matrices tile the loaded block, [block rows, block cols] with product `num`. Default x1 [1, 1], x2 [2, 1], x4 [2, 2]. */
  readonly grid?: readonly [number, number];
  /** Which matrix goes to register i: `columnMajor` (default; i = blockCol·rows + blockRow, the mma A order) or `rowMajor`. */
  readonly order?: 'columnMajor' | 'rowMajor';
  /** 16-bit element type (`.b16`); default fp16. */
  readonly dtype?: DTypeName;
}

/** An ldmatrix fragment plus who supplies which row address. */
export class LdmatrixAtom extends FragmentAtom {
  readonly num: 1 | 2 | 4;
  readonly trans: boolean;
  readonly grid: readonly [number, number];
  readonly order: 'columnMajor' | 'rowMajor';

  constructor(spec: Required<LdmatrixSpec>, encoding: TileDistributionEncoding) {
    const suffix = `x${spec.num}${spec.trans ? '.trans' : ''}`;
    super({
      name: `ldmatrix.m8n8.${suffix}.b16`,
      instruction: `ldmatrix.sync.aligned.m8n8.${suffix}.shared.b16`,
      target: 'sm_80',
      operand: 'fragment',
      dtype: spec.dtype,
      xNames: ['row', 'col'],
      encoding,
      reference:
        'PTX ISA 9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix" (#warp-level-matrix-instructions-ldmatrix), Figure 104 and the .num address table',
    });
    this.num = spec.num;
    this.trans = spec.trans;
    this.grid = spec.grid;
    this.order = spec.order;
  }

  /** Grid position [block row, block col] of matrix `m` (the matrix register `m` receives). */
  matrixBlock(m: number): [number, number] {
    const [gr, gc] = this.grid;
    return this.order === 'columnMajor' ? [m % gr, Math.floor(m / gr)] : [Math.floor(m / gc), m % gc];
  }

  /**
   * [row, col] (tile coordinates, in memory) of the start of the 8-element row whose shared-memory
   * address `lane` supplies: lanes 8m..8m+7 give rows 0..7 of matrix m; undefined for lanes the
   * instruction does not read (lanes ≥ 8·num). Rows are memory rows with or without `.trans`.
   */
  rowAddressOf(lane: number): [number, number] | undefined {
    if (!Number.isSafeInteger(lane) || lane < 0 || lane >= 32) throw new AtomError(this.name, 'lane must be in [0, 32)', String(lane));
    if (lane >= 8 * this.num) return undefined;
    const [br, bc] = this.matrixBlock(Math.floor(lane / 8));
    return [8 * br + (lane % 8), 8 * bc];
  }
}

/**
 * `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16` as a warp distribution over the loaded
 * block in memory (8·gridRows × 8·gridCols, rows = memory rows). Per the PTX ISA, register m holds
 * matrix m; in it, lane l (g = l / 4, t = l % 4) gets elements j = 0, 1 of row g, cols 2t + j;
 * with `.trans` the matrix is read column-major, so lane l gets memory row 2t + j, col g.
 *
 * Encoding (grid digits of length 1 are left out): without `.trans` H_row = (gr, 8), H_col =
 * (gc, 4, 2), lane → (H_row[1], H_col[1]); with `.trans` H_row = (gr, 4, 2), H_col = (gc, 8),
 * lane → (H_col[1], H_row[1]); Y = the matrix digits in register order, then the pair digit.
 * So x4 without `.trans` is the mma.m16n8k16 A fragment and x2 `.trans` ([2, 1]) is its B fragment.
 */
export function ldmatrixAtom(spec: LdmatrixSpec): LdmatrixAtom {
  const num = spec.num;
  if (num !== 1 && num !== 2 && num !== 4) throw new AtomError('ldmatrixAtom', 'num must be 1, 2 or 4', String(num));
  const grid = spec.grid ?? (num === 1 ? [1, 1] : num === 2 ? [2, 1] : [2, 2]);
  const [gr, gc] = grid;
  if (!Number.isSafeInteger(gr) || !Number.isSafeInteger(gc) || gr < 1 || gc < 1 || gr * gc !== num) {
    throw new AtomError(
      'ldmatrixAtom',
      `grid must be [rows, cols] of positive integers with rows·cols = num (${num})`,
      `[${grid.join(', ')}]`,
    );
  }
  const dtype = spec.dtype ?? 'fp16';
  if (dtype !== 'fp16' && dtype !== 'bf16') throw new AtomError('ldmatrixAtom', 'dtype must be a 16-bit type (fp16, bf16) for .b16', dtype);
  const trans = spec.trans ?? false;
  const order = spec.order ?? 'columnMajor';
  if (order !== 'columnMajor' && order !== 'rowMajor')
    throw new AtomError('ldmatrixAtom', 'order must be columnMajor or rowMajor', String(order));

  // Digit lists: [grid digit if > 1, then the in-matrix digits].
  const rowIn = trans ? [4, 2] : [8];
  const colIn = trans ? [8] : [4, 2];
  const rowOff = gr > 1 ? 1 : 0;
  const colOff = gc > 1 ? 1 : 0;
  const hs = [
    [...(gr > 1 ? [gr] : []), ...rowIn],
    [...(gc > 1 ? [gc] : []), ...colIn],
  ];
  // The lane is (g, t) = (lane / 4, lane % 4): g is the 8-digit, t the 4-digit.
  const lane = trans ? [hRef(1, colOff), hRef(0, rowOff)] : [hRef(0, rowOff), hRef(1, colOff)];
  const pair = trans ? hRef(0, rowOff + 1) : hRef(1, colOff + 1);
  const blockRow = gr > 1 ? [hRef(0, 0)] : [];
  const blockCol = gc > 1 ? [hRef(1, 0)] : [];
  const matrixYs: RhRef[] = order === 'columnMajor' ? [...blockCol, ...blockRow] : [...blockRow, ...blockCol];
  const encoding = new TileDistributionEncoding({ hs, ps: [lane], ys: [...matrixYs, pair] });
  return new LdmatrixAtom({ num, trans, grid: [gr, gc], order, dtype }, encoding);
}
