import { ArgumentError } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { voidType } from './cType.ts';
import type { CType } from './cType.ts';
import { BlockBuilder } from './blockBuilder.ts';
import type { RangeLike } from './blockBuilder.ts';
import { CodeWriter } from './codeWriter.ts';
import { isIdentifier, makeCall, makeVar } from './expr.ts';
import type { CallOptions, Expr, IntRange, VarExpr } from './expr.ts';
import { NameScope } from './nameScope.ts';
import { lit, toRange } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { declarator, writeStmt } from './render.ts';
import type { RenderOptions } from './render.ts';
import { convertForStore } from './stmt.ts';
import type { BlockStmt } from './stmt.ts';

/** A function parameter. `range` is a promise about its integer values (the simplifier may use it). */
export interface Param {
  readonly name: string;
  readonly type: CType;
  readonly range: IntRange | null;
}

/**
 * A function definition (or, with `body: null`, a declaration):
 *
 * ```
 * template <templateParams>
 * qualifiers... returnType attributes... name(params) { body }
 * ```
 *
 * e.g. qualifiers `extern "C"`, `__global__`; attributes `__launch_bounds__(256)`.
 */
export interface FunctionDef {
  readonly kind: 'function';
  readonly name: string;
  /** How callers spell it: `name`, or `ns::name` inside a namespace. */
  readonly qualifiedName: string;
  readonly returnType: CType;
  readonly params: readonly Param[];
  readonly qualifiers: readonly string[];
  readonly attributes: readonly string[];
  readonly templateParams: readonly string[];
  readonly body: BlockStmt | null;
}

/** A parameter's type, optionally with a known range. */
export type ParamSpec = CType | { readonly type: CType; readonly range?: RangeLike };

/** The shape of a function: name, result, parameters (in order) and decorations. */
export interface FunctionSpec<P extends Readonly<Record<string, ParamSpec>>> {
  readonly name: string;
  /** Result type (default `void`). */
  readonly returns?: CType;
  /** Parameters by name, in declaration order: `{ a: pointer(float32), n: int32 }`. */
  readonly params?: P;
  /** Before the return type: `extern "C"`, `__global__`, `__device__`, `__forceinline__`, `static`. */
  readonly qualifiers?: readonly string[];
  /** Between the return type and the name: `__launch_bounds__(256)`. */
  readonly attributes?: readonly string[];
  /** `typename T`, `int N`. */
  readonly templateParams?: readonly string[];
  /** The scope the function's own names nest in (a source file's scope); default a new root. */
  readonly scope?: NameScope;
  /** Enclosing namespaces, outermost first (callers then spell `a::b::name`). */
  readonly namespace?: readonly string[];
}

/** The parameters as variables, by name. */
export type ParamVars<P> = { readonly [K in keyof P]: VarExpr };

function paramsOf(spec: Readonly<Record<string, ParamSpec>>): Param[] {
  return Object.entries(spec).map(([name, p]) => {
    const type = 'kind' in p ? p : p.type;
    const range = 'kind' in p || p.range === undefined ? null : toRange(p.range);
    if (type.kind === 'void' || type.kind === 'array') throw new CodegenTypeError(`parameter ${name}`, `cannot have ${type.kind} type`);
    return { name, type, range };
  });
}

function checkName(name: string): void {
  if (!isIdentifier(name)) throw new ArgumentError('name', 'a function name must be a C++ identifier', name);
}

function make(spec: FunctionSpec<Readonly<Record<string, ParamSpec>>>, params: Param[], body: BlockStmt | null): FunctionDef {
  return Object.freeze({
    kind: 'function',
    name: spec.name,
    qualifiedName: [...(spec.namespace ?? []), spec.name].join('::'),
    returnType: spec.returns ?? voidType,
    params: Object.freeze(params.map((p) => Object.freeze(p))),
    qualifiers: Object.freeze([...(spec.qualifiers ?? [])]),
    attributes: Object.freeze([...(spec.attributes ?? [])]),
    templateParams: Object.freeze([...(spec.templateParams ?? [])]),
    body,
  });
}

/**
 * Define a function: `body` receives a block builder (whose `return` checks and converts against
 * `returns`) and the parameters as variables:
 *
 * ```ts
 * const f = defineFunction({ name: 'offset', returns: int32, params: { i: int32, j: int32 } },
 *   (b, { i, j }) => { b.return(add(mul(i, 64), j)); });
 * ```
 *
 * Parameter names are kept exactly (they are part of the signature); a clash or a keyword throws.
 * Locals get unique names in a scope nested in the parameters'.
 */
export function defineFunction<P extends Readonly<Record<string, ParamSpec>>>(
  spec: FunctionSpec<P>,
  body: (b: BlockBuilder, params: ParamVars<P>) => void,
): FunctionDef {
  checkName(spec.name);
  const params = paramsOf(spec.params ?? {});
  const scope = (spec.scope ?? new NameScope()).child();
  const vars: Record<string, VarExpr> = {};
  for (const p of params) {
    scope.reserve(p.name, `parameters of ${spec.name}`);
    vars[p.name] = makeVar(p.name, p.type, p.range);
  }
  const b = new BlockBuilder(scope.child(), { returnType: spec.returns ?? voidType });
  body(b, vars as ParamVars<P>);
  return make(spec, params, b.build());
}

/** A declaration (prototype) only: `... name(params);` */
export function declareFunction<P extends Readonly<Record<string, ParamSpec>>>(spec: FunctionSpec<P>): FunctionDef {
  checkName(spec.name);
  return make(spec, paramsOf(spec.params ?? {}), null);
}

/**
 * A call of `fn` with `args` converted to the parameter types (like C++ would, but with the
 * conversion visible as a cast). Calls are impure unless `options.pure`.
 */
export function callFunction(fn: FunctionDef, args: readonly ExprLike[], options: CallOptions = {}): Expr {
  if (args.length !== fn.params.length) {
    throw new CodegenTypeError(`call of ${fn.name}`, `takes ${fn.params.length} argument(s)`, String(args.length));
  }
  const converted = args.map((a, i) => {
    const p = fn.params[i] as Param;
    const e =
      typeof a === 'object' ? a : lit(a, p.type.kind === 'int' || p.type.kind === 'float' || p.type.kind === 'bool' ? p.type : undefined);
    return convertForStore(e, p.type, `argument ${p.name} of ${fn.name}`);
  });
  return makeCall(fn.qualifiedName, converted, fn.returnType, options);
}

/** Write a function definition or declaration. */
export function writeFunction(w: CodeWriter, fn: FunctionDef, options: RenderOptions = {}): void {
  if (fn.templateParams.length > 0) w.line(`template <${fn.templateParams.join(', ')}>`);
  const head = [...fn.qualifiers, declarator(fn.returnType, '').trimEnd(), ...fn.attributes].join(' ');
  const params = fn.params.map((p) => declarator(p.type, p.name)).join(', ');
  const signature = `${head} ${fn.name}(${params})`;
  if (fn.body === null) {
    w.line(`${signature};`);
    return;
  }
  w.line(`${signature} {`);
  w.indented(() => {
    for (const s of (fn.body as BlockStmt).body) writeStmt(w, s, options);
  });
  w.line('}');
}

/** The text of one function. */
export function renderFunction(fn: FunctionDef, options: RenderOptions = {}): string {
  const w = new CodeWriter(options.indent ?? 2);
  writeFunction(w, fn, options);
  return w.toString();
}
