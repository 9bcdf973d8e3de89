// The typed error of the FMHA forward operator's argument checks.
import { ArgumentError } from '@tilekit/numeric';

/** An FMHA forward argument broke a rule; `argument` is `problem.<field>`. */
export class FmhaFwdArgumentError extends ArgumentError {}
