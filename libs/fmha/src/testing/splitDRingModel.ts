// A model of the sm_80 split-D pipelines' ring protocol for their specs: one thread's cp.async
// groups and the block's barriers, driven by `splitDRingStep`'s ops. It records every violation of
// the ring: a load overwriting a slot whose previous load was read with no barrier since, a step
// reading a slot that holds another load, or a load before it landed and a barrier published it.
import type { SplitDRingOp } from '../pipeline/fmhaFwdSm80SplitDPipeline.ts';

/** One ring in a spec: issue loads into slots, then run each step's ops; `violations` collects what broke. */
export class SplitDRingModel {
  readonly violations: string[] = [];
  /** Barriers passed so far. */
  epoch = 0;
  /** The load each committed group carries (undefined: an empty group). */
  readonly #groups: (number | undefined)[] = [];
  /** Load → the epoch at which a wait saw it complete. */
  readonly #landed = new Map<number, number>();
  readonly #slotOwner = new Map<number, { load: number; readEpoch: number | undefined }>();

  /** Commits a group copying load `g` into `slot`. */
  load(g: number, slot: number): void {
    const prev = this.#slotOwner.get(slot);
    if (prev !== undefined && (prev.readEpoch === undefined || prev.readEpoch >= this.epoch))
      this.violations.push(`load ${g} overwrites slot ${slot} (load ${prev.load}) with no barrier since its read`);
    this.#slotOwner.set(slot, { load: g, readEpoch: undefined });
    this.#groups.push(g);
  }

  /** Commits an empty group (a load past the last step). */
  empty(): void {
    this.#groups.push(undefined);
  }

  /** Runs step `g`'s `ops`: issues through `issue`, waits, barriers, and the compute reading load g from `slot` (then `onCompute`). */
  step(ops: readonly SplitDRingOp[], g: number, slot: number, issue: (load: number) => void, onCompute?: () => void): void {
    for (const op of ops) {
      if (op.op === 'issue') issue(g + op.ahead);
      else if (op.op === 'wait') {
        for (let i = 0; i < this.#groups.length - op.pending; i++) {
          const load = this.#groups[i];
          if (load !== undefined && !this.#landed.has(load)) this.#landed.set(load, this.epoch);
        }
      } else if (op.op === 'sync') this.epoch++;
      else {
        const owner = this.#slotOwner.get(slot);
        if (owner?.load !== g) this.violations.push(`step ${g} reads slot ${slot} holding load ${owner?.load}`);
        const at = this.#landed.get(g);
        if (at === undefined || at >= this.epoch)
          this.violations.push(`step ${g} reads load ${g} before it landed and a barrier published it`);
        if (owner !== undefined) this.#slotOwner.set(slot, { load: g, readEpoch: this.epoch });
        onCompute?.();
      }
    }
  }
}
