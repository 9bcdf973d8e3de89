import { ArgumentError } from '@tilekit/numeric';

/**
 * A DSA argument (shape, head count, top-k size, window, page size, cache layout, dtype or device
 * buffer) broke a rule. `argument` names it (`topk`, `windowEnd[17]`, `contextLens[3]`,
 * `buffers.logits`, …) and the message states the rule and what was found.
 */
export class DsaArgumentError extends ArgumentError {}
