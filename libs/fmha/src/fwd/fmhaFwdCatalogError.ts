// The typed error of an inconsistent forward attention catalog (dense or sparse).
import { TilekitError } from '@tilekit/numeric';

/** Two instances with one name or hash: the catalog is inconsistent. */
export class FmhaFwdCatalogError extends TilekitError {
  constructor(message: string) {
    super('fmha-fwd/catalog', message);
  }
}
