import { TilekitError } from '@tilekit/numeric';

/**
 * An expression, statement or declaration was built with operands C++ would reject (e.g. `%` on a
 * float, a shift of a pointer, a call with the wrong arity). Raised at construction, before any text
 * is emitted. Code: `codegen/type-error`.
 */
export class CodegenTypeError extends TilekitError {
  readonly argument: string;

  constructor(argument: string, rule: string, found?: string) {
    super('codegen/type-error', `${argument}: ${rule}${found === undefined ? '' : ` (got ${found})`}`);
    this.argument = argument;
  }
}

/** Why an evaluation has no defined C++ result. */
export type UndefinedBehaviorKind =
  | 'signed-overflow'
  | 'division-by-zero'
  | 'shift-out-of-range'
  | 'negative-left-shift'
  | 'float-to-int-out-of-range'
  | 'index-out-of-bounds';

/**
 * `evaluate()` met an operation whose C++ behaviour is undefined for these values (signed overflow,
 * division by zero, an out-of-range shift...). The emitted code would be allowed to do anything, so
 * the evaluator refuses rather than guessing. Code: `codegen/undefined-behavior`.
 */
export class UndefinedBehaviorError extends TilekitError {
  readonly kind: UndefinedBehaviorKind;

  constructor(kind: UndefinedBehaviorKind, detail: string) {
    super('codegen/undefined-behavior', `undefined behavior (${kind}): ${detail}`);
    this.kind = kind;
  }
}

/**
 * `evaluate()` cannot compute a node: an unbound variable, a binding of the wrong kind or outside the
 * variable's declared range, or a node with no TS meaning (pointer dereference, an unbound call).
 * Code: `codegen/not-evaluable` (or `codegen/unbound` / `codegen/binding-out-of-range`).
 */
export class EvaluationError extends TilekitError {
  constructor(code: 'codegen/not-evaluable' | 'codegen/unbound' | 'codegen/binding-out-of-range', message: string) {
    super(code, message);
  }
}

/**
 * A target was asked for something it does not have (a warp shuffle on `host`, `__launch_bounds__`
 * on a plain C++ compiler, a CUDA-only intrinsic on `gfx942`). The message names both.
 * Code: `codegen/unsupported-feature`.
 */
export class TargetFeatureError extends TilekitError {
  readonly target: string;
  readonly feature: string;

  constructor(target: string, feature: string, hint?: string) {
    super(
      'codegen/unsupported-feature',
      `target ${target}: ${feature} is not available on this target${hint === undefined ? '' : ` (${hint})`}`,
    );
    this.target = target;
    this.feature = feature;
  }
}

/**
 * Two top-level entities (functions, globals) were given the same name, where the name is part of
 * the contract (e.g. an `extern "C"` kernel entry point) and cannot be renamed silently.
 * Code: `codegen/duplicate-name`.
 */
export class DuplicateNameError extends TilekitError {
  /** The name that was declared twice. */
  readonly duplicate: string;

  constructor(name: string, where: string) {
    super('codegen/duplicate-name', `${where}: the name "${name}" is already declared in this scope`);
    this.duplicate = name;
  }
}
