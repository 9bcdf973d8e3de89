import { ArgumentError } from '@tilekit/numeric';
import type { BlockBuilder } from '../blockBuilder.ts';
import { typeToString, voidType } from '../cType.ts';
import type { CType } from '../cType.ts';
import { CodegenTypeError, TargetFeatureError } from '../errors.ts';
import { makeCall } from '../expr.ts';
import { printExpr } from '../printExpr.ts';
import type { Expr } from '../expr.ts';
import { defineFunction, renderFunction } from '../function.ts';
import type { FunctionDef, ParamSpec, ParamVars } from '../function.ts';
import { snippet } from '../requirement.ts';
import type { Requirement, SnippetRequirement } from '../requirement.ts';
import { sm90a } from '../cudaTarget.ts';
import type { Target, TargetFeature } from '../target.ts';

/**
 * A leaf device helper: one small `__device__ __forceinline__` function (built with the function
 * builder; its only hand-written text is the inline PTX `asm`), carried as a named snippet
 * requirement, so a source file that calls it emits it exactly once, before the first item.
 */
export interface DeviceHelper {
  /** The helper's C++ name (`tk_*`). */
  readonly name: string;
  /** Its result type. */
  readonly returns: CType;
  /** The function as data. */
  readonly fn: FunctionDef;
  /** The snippet that emits it (doc comment + definition), after its own requirements. */
  readonly requirement: SnippetRequirement;
}

/** What `defineDeviceHelper` takes. */
export interface DeviceHelperSpec<P extends Readonly<Record<string, ParamSpec>>> {
  readonly name: string;
  /** One-line comment printed above the helper (what PTX it wraps). */
  readonly doc: string;
  readonly returns?: CType;
  readonly params?: P;
  /** `int N` etc.: immediates the PTX needs as compile-time constants (`"n"` constraints). */
  readonly templateParams?: readonly string[];
  /** Helpers (or headers) this one calls. */
  readonly requires?: readonly Requirement[];
}

/**
 * Builds a CUDA device helper once (the CUDA spelling of a force-inlined function is the same on
 * every CUDA target). Postcondition: the snippet's lines are the comment and the rendered function.
 */
export function defineDeviceHelper<P extends Readonly<Record<string, ParamSpec>>>(
  spec: DeviceHelperSpec<P>,
  body: (b: BlockBuilder, params: ParamVars<P>) => void,
): DeviceHelper {
  const fn = defineFunction(
    {
      name: spec.name,
      ...(spec.returns === undefined ? {} : { returns: spec.returns }),
      ...(spec.params === undefined ? {} : { params: spec.params }),
      ...(spec.templateParams === undefined ? {} : { templateParams: spec.templateParams }),
      qualifiers: sm90a.functionQualifiers('force'),
    },
    body,
  );
  const lines = [`// ${spec.doc}`, ...renderFunction(fn, sm90a).trimEnd().split('\n')];
  return Object.freeze({
    name: spec.name,
    returns: spec.returns ?? voidType,
    fn,
    requirement: snippet(spec.name, lines, spec.requires ?? []),
  });
}

/** A call of a helper (impure: every wrapped instruction has side effects or ordering). */
export function callHelper(helper: DeviceHelper, args: readonly Expr[], templateArgs: readonly string[] = []): Expr {
  if (args.length !== helper.fn.params.length) {
    throw new CodegenTypeError(`call of ${helper.name}`, `takes ${helper.fn.params.length} argument(s)`, String(args.length));
  }
  return makeCall(helper.name, args, helper.returns, { requires: [helper.requirement], templateArgs });
}

/**
 * Throws `TargetFeatureError` naming `what` and `feature` unless `target` is a CUDA target with
 * `feature` (gfx942 equivalents are not emitted yet; host has no device code).
 */
export function requireIntrinsic(target: Target, feature: TargetFeature, what: string): void {
  if (target.language === 'cuda' && target.has(feature)) return;
  const hint =
    target.language === 'hip'
      ? 'no gfx942 equivalent is emitted yet'
      : target.language === 'c++'
        ? 'host code has no device intrinsics'
        : `needs a target with "${feature}" (sm_90a)`;
  throw new TargetFeatureError(target.name, `${what} [${feature}]`, hint);
}

/** Checks that `e` can be passed where a helper takes an address (a pointer, or an array that decays to one). */
export function requireAddress(argument: string, e: Expr): void {
  if (e.type.kind !== 'pointer' && e.type.kind !== 'array') {
    throw new CodegenTypeError(argument, 'must be a pointer or an array (an address)', typeToString(e.type));
  }
}

/** Checks that `e` is an integer expression (an index, count or coordinate). */
export function requireInteger(argument: string, e: Expr): void {
  if (e.type.kind !== 'int' && e.type.kind !== 'bool')
    throw new CodegenTypeError(argument, 'must be an integer expression', typeToString(e.type));
}

/** Checks a compile-time immediate: an integer in [min, max] (and a multiple of `step` when given). */
export function requireImmediate(argument: string, value: number, min: number, max: number, step = 1): void {
  if (!Number.isSafeInteger(value) || value < min || value > max || value % step !== 0) {
    const rule = step === 1 ? `must be an integer in [${min}, ${max}]` : `must be a multiple of ${step} in [${min}, ${max}]`;
    throw new ArgumentError(argument, rule, value);
  }
}

/** One operand of an inline-asm statement: its constraint (`"r"`, `"=l"`, `"n"`) and expression. */
export type AsmOperand = readonly [constraint: string, value: Expr];

/** What `emitAsm` writes. */
export interface AsmSpec {
  /** The PTX instructions, one per entry (several are wrapped in `{ }` so `.reg` names stay local). */
  readonly ptx: readonly string[];
  readonly outputs?: readonly AsmOperand[];
  readonly inputs?: readonly AsmOperand[];
  /** Add the `"memory"` clobber (the instruction reads or writes memory the compiler must not cache across it). */
  readonly memory?: boolean;
  /**
   * `false` for a pure register computation (fast-math approximations, packing conversions): plain
   * `asm`, which the compiler may schedule, merge or drop like any arithmetic. Default `true`.
   */
  readonly volatile?: boolean;
}

function quote(text: string): string {
  if (/["\\\n]/.test(text)) throw new ArgumentError('ptx', 'must not contain quotes, backslashes or newlines', text);
  return `"${text}"`;
}

/**
 * Appends `asm volatile(...)` to `b`: the one hand-written text of a leaf wrapper. Operands print
 * through `printExpr`, so they are the helper's own (builder) variables. `volatile` unless the spec
 * says otherwise: most wrapped instructions have effects beyond their outputs (memory, barriers,
 * register budgets); pure register arithmetic opts out so the compiler can schedule it.
 */
export function emitAsm(b: BlockBuilder, spec: AsmSpec): void {
  const operands = (list: readonly AsmOperand[] | undefined): string =>
    (list ?? []).map(([c, e]) => `${quote(c)}(${printExpr(e)})`).join(', ');
  const sections = [operands(spec.outputs), operands(spec.inputs), spec.memory === true ? '"memory"' : ''];
  while (sections.length > 0 && sections[sections.length - 1] === '') sections.pop();
  const tail = sections.map((x) => (x === '' ? ' :' : ` : ${x}`)).join('');
  const keyword = spec.volatile === false ? 'asm' : 'asm volatile';
  if (spec.ptx.length === 1) {
    b.verbatim(`${keyword}(${quote(spec.ptx[0] as string)}${tail});`);
    return;
  }
  const body = ['{', ...spec.ptx.map((l) => `  ${l}`), '}'].map((l) => `    ${quote(l).slice(0, -1)}\\n"`);
  if (tail === '') body[body.length - 1] += ');';
  else body.push(`   ${tail});`);
  b.verbatim([`${keyword}(`, ...body]);
}
