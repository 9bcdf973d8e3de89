// The identity output hook: the kernel stores the selected token positions themselves.
import type { DsaTopkOutput } from './dsaTopkOutput.ts';

/** Stores each selected position as is (token indices into the row). */
export const dsaTopkIndexOutput: DsaTopkOutput = Object.freeze<DsaTopkOutput>({
  kind: 'index',
  params: Object.freeze({}),
  emitValue: (_b, _args, _row, pos) => pos,
  value: (_row: number, pos: number) => pos,
});
