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

/** One broken rule of a validation: the argument as the caller named it, the rule, and what was found. */
export interface ArgumentProblem {
  readonly argument: string;
  readonly rule: string;
  /** The offending value (omitted from the message when undefined). */
  readonly found?: unknown;
}

/**
 * One or more arguments broke documented rules: raised before any work is done with them.
 * `problems` lists every broken rule a validator found (one for a plain `new ArgumentError(argument,
 * rule, found)`); `argument` is the first one's, and the message states them all, one clause each
 * (`a: rule (got x)` for one, `2 problems: a: rule (got x); b: rule (got y)` for more).
 * Subclasses that keep this constructor can be built from a problem list by `ArgumentProblems`.
 */
export class ArgumentError extends TilekitError {
  readonly argument: string;
  readonly problems: readonly ArgumentProblem[];

  constructor(argument: string, rule: string, found?: unknown);
  constructor(problems: readonly ArgumentProblem[]);
  constructor(first: string | readonly ArgumentProblem[], rule = '', found?: unknown) {
    const problems: readonly ArgumentProblem[] = Object.freeze(
      typeof first === 'string' ? [{ argument: first, rule, found }] : first.map((p) => Object.freeze({ ...p })),
    );
    if (problems.length === 0) throw new RangeError('ArgumentError: a problem list needs at least one problem');
    super('argument/invalid', formatProblems(problems));
    this.argument = problems[0]!.argument;
    this.problems = problems;
  }
}

/** A class of `ArgumentError` that can be built from a problem list (every subclass keeping the base constructor). */
export type ArgumentErrorClass = new (problems: readonly ArgumentProblem[]) => ArgumentError;

/** `argument: rule (got found)`, the clause of one problem. */
export function formatArgumentProblem(problem: ArgumentProblem): string {
  const shown = problem.found === undefined ? '' : ` (got ${formatFound(problem.found)})`;
  return `${problem.argument}: ${problem.rule}${shown}`;
}

function formatProblems(problems: readonly ArgumentProblem[]): string {
  const clauses = problems.map(formatArgumentProblem);
  return clauses.length === 1 ? clauses[0]! : `${clauses.length} problems: ${clauses.join('; ')}`;
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
