import { TilekitError } from '@tilekit/numeric';

/** Base of @tilekit/fmha's errors: a stable `code` (`fmha/...`) and a message naming what broke which rule. */
export class FmhaError extends TilekitError {}
