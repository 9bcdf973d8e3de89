import { ArgumentError, type ArgumentErrorClass, type ArgumentProblem } from './tilekitError.ts';

/**
 * Collects what a validator finds, so that one error lists every broken rule instead of the first.
 * Each independent check runs through `check` (an `ArgumentError` it throws is recorded and the
 * value becomes `undefined`, so checks that depend on it are skipped rather than repeated);
 * `report` records a rule broken outside a check. `throwIfAny` then throws: nothing when nothing was
 * found, the recorded error itself when it was the only one (class, code and message exactly as a
 * first-error validator threw them), else one `errorClass` listing every problem in the order found.
 * Errors other than `ArgumentError` (bugs, other typed errors) are never swallowed.
 */
export class ArgumentProblems {
  readonly errorClass: ArgumentErrorClass;
  readonly #errors: ArgumentError[] = [];

  constructor(errorClass: ArgumentErrorClass) {
    this.errorClass = errorClass;
  }

  /** Runs one check; returns its value, or `undefined` after recording the `ArgumentError` it threw. */
  check<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (e) {
      if (!(e instanceof ArgumentError)) throw e;
      this.#errors.push(e);
      return undefined;
    }
  }

  /** Records a broken rule as an `errorClass` error. */
  report(argument: string, rule: string, found?: unknown): void {
    this.#errors.push(new this.errorClass([{ argument, rule, found }]));
  }

  /** Every problem recorded so far, in order (the problems of a recorded multi-problem error flattened). */
  get problems(): readonly ArgumentProblem[] {
    return this.#errors.flatMap((e) => e.problems);
  }

  /** Whether nothing has been recorded. */
  get isEmpty(): boolean {
    return this.#errors.length === 0;
  }

  /** Throws what was recorded (see the class comment); returns when nothing was. */
  throwIfAny(): void {
    if (this.#errors.length === 0) return;
    if (this.#errors.length === 1) throw this.#errors[0]!;
    throw new this.errorClass(this.problems);
  }
}
