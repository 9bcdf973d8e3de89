export { ArgumentError, TilekitError } from './tilekitError.ts';
