import { add, addressOf, bitXor, index, ldmatrix, type BlockBuilder, type Expr, type Target, type VarExpr } from '@tilekit/codegen';
import { MmaSyncBlockGemmSs, type MmaSyncBlockGemmState } from '@tilekit/gemm';
import type { DistributedTensor } from '@tilekit/tile';

/**
 * The S = Q·Kᵀ block GEMM with Q held in registers: `MmaSyncBlockGemmSs` whose A fragments of every
 * k16 step are loaded once (the same ldmatrix plan, each step's registers kept apart) and then fed
 * to the mma.sync of every key tile.
 */
export class ResidentABlockGemm extends MmaSyncBlockGemmSs {
  /** Registers of the whole A tile: 4 per (k16 step, m16 repeat). */
  get residentRegisters(): number {
    return 4 * this.mRepeats * this.kSteps;
  }

  #slot(kk: number, i: number): number {
    return 4 * (kk * this.mRepeats + i);
  }

  /** ldmatrix of every A fragment of the tile at `aTile` into `frag` (a `residentRegisters` array). */
  emitLoadA(b: BlockBuilder, target: Target, state: MmaSyncBlockGemmState, aTile: Expr, frag: VarExpr): void {
    for (const l of this.aPlan.loads) {
      b.expr(
        ldmatrix(target, {
          count: 4,
          trans: this.aLayout.major === 'MN',
          dst: addressOf(index(frag, this.#slot(l.kk, l.q))),
          src: add(aTile, bitXor(add(state.aBase!, l.add), l.xor)),
        }),
      );
    }
  }

  /** acc += A·B with A from `frag` (see {@link emitLoadA}) and B from `bTile`. */
  emitMmaResidentA(
    b: BlockBuilder,
    target: Target,
    acc: DistributedTensor,
    state: MmaSyncBlockGemmState,
    frag: VarExpr,
    bTile: Expr,
  ): void {
    target.require('mma-sync');
    this.checkAcc(acc, 'ResidentABlockGemm.emitMmaResidentA');
    for (let kk = 0; kk < this.kSteps; kk++) {
      this.emitBLoads(b, target, state, bTile, kk);
      this.emitMmas(b, target, acc, (i) => addressOf(index(frag, this.#slot(kk, i))), state);
    }
  }
}
