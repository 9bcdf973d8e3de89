// A tiny interpreter for straight-line emitted code (declarations, assignments, if/else, blocks,
// return) on top of codegen's exact `evaluate`: lets emission be checked in-process on thousands of
// cases before the g++ batch checks the same code compiled.
import {
  add,
  bitAnd,
  bitOr,
  bitXor,
  cast,
  div,
  evaluate,
  mod,
  mul,
  shl,
  shr,
  sub,
  type Expr,
  type FunctionDef,
  type Scalar,
  type Stmt,
} from '@tilekit/codegen';

type Env = Record<string, Scalar>;
const compound: Record<string, (a: Expr, b: Expr) => Expr> = {
  '+=': add,
  '-=': sub,
  '*=': mul,
  '/=': div,
  '%=': mod,
  '<<=': shl,
  '>>=': shr,
  '&=': bitAnd,
  '|=': bitOr,
  '^=': bitXor,
};

class Return {
  readonly value: Scalar | undefined;
  constructor(value: Scalar | undefined) {
    this.value = value;
  }
}

function run(stmts: readonly Stmt[], env: Env): void {
  for (const s of stmts) {
    switch (s.kind) {
      case 'decl':
        if (s.init !== null) env[s.name] = evaluate(s.init, env);
        break;
      case 'assign': {
        if (s.target.kind !== 'var') throw new Error(`interpretFunction: only variables are assignable (got ${s.target.kind})`);
        const value = s.op === '=' ? s.value : cast(compound[s.op]!(s.target, s.value), s.target.type);
        env[s.target.name] = evaluate(value, env);
        break;
      }
      case 'if': {
        const c = evaluate(s.cond, env);
        if (c !== false && c !== 0 && c !== 0n) run(s.then.body, env);
        else if (s.else !== null) run(s.else.kind === 'block' ? s.else.body : [s.else], env);
        break;
      }
      case 'block': // emitted names never shadow (codegen's NameScope), so one environment serves every block
        run(s.body, env);
        break;
      case 'return':
        throw new Return(s.value === null ? undefined : evaluate(s.value, env));
      case 'comment':
        break;
      default:
        throw new Error(`interpretFunction: unsupported statement ${s.kind}`);
    }
  }
}

/** Runs a function built with codegen on named arguments; returns what it returns (exact C++ semantics). */
export function interpretFunction(fn: FunctionDef, args: Readonly<Record<string, Scalar>>): Scalar | undefined {
  if (fn.body === null) throw new Error(`interpretFunction: ${fn.name} has no body`);
  const env: Env = { ...args };
  try {
    run(fn.body.body, env);
  } catch (e) {
    if (e instanceof Return) return e.value;
    throw e;
  }
  return undefined;
}
