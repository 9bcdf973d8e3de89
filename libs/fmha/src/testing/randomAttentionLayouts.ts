// Random input and output layouts for the operators' randomized GPU specs (fmha forward and backward, Sparge).
import fc from 'fast-check';
import type { AttentionLayout } from '../reference/attentionTensorLayout.ts';

/** Layouts as drawn: one for the inputs, one for the outputs. */
export interface AttentionRandomLayouts {
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
}

/**
 * The record fields of the layouts (bhsd or bshd each), spread into a problem's `fc.record` in this
 * order (the draw order of the recorded seeds).
 */
export const attentionRandomLayoutsFields: { readonly [K in keyof AttentionRandomLayouts]: fc.Arbitrary<AttentionLayout> } = {
  inputLayout: fc.constantFrom<AttentionLayout>('bhsd', 'bshd'),
  outputLayout: fc.constantFrom<AttentionLayout>('bhsd', 'bshd'),
};
