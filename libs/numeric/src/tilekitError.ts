/**
 * The base of every error tilekit raises on purpose. `code` is a stable machine-readable string
 * (e.g. `"layout/negative-length"`); the message names the argument, the rule it broke and what
 * was found, so it can be shown to a user as is.
 */
export class TilekitError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An argument broke a documented rule: raised before any work is done with it. */
export class ArgumentError extends TilekitError {
  readonly argument: string;

  constructor(argument: string, rule: string, found?: unknown) {
    const shown = found === undefined ? '' : ` (got ${formatFound(found)})`;
    super('argument/invalid', `${argument}: ${rule}${shown}`);
    this.argument = argument;
  }
}

function formatFound(found: unknown): string {
  if (typeof found === 'bigint') return `${found}n`;
  if (typeof found === 'string') return JSON.stringify(found);
  try {
    return JSON.stringify(found) ?? String(found);
  } catch {
    return String(found);
  }
}
