import { ArgumentError } from '@tilekit/numeric';

/**
 * A Sparge argument (hyperparameter, shape, block map or LUT) broke a rule. `argument` names it
 * (`topk`, `simthreshd1[3]`, `shape.headDim`, `lut.validBlockNum[5]`, …) and the message states the
 * rule and what was found.
 */
export class SpargeArgumentError extends ArgumentError {}
