import {
  array,
  cast,
  index,
  int32,
  type BlockBuilder,
  type CType,
  type ForRangeSpec,
  type Expr,
  type ExprLike,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { IndexEmitter, type IndexEmitterOptions } from '@tilekit/layout';
import { TileEmitError } from './errors.ts';

/**
 * The two dialects tile code is emitted in. `cuda`: one function body per GPU thread, the thread id
 * is `threadIdx.x`, registers are local arrays, shared memory is `__shared__`, barriers are
 * `__syncthreads()` and lanes talk through warp shuffles. `host`: the SAME program for g++, where
 * the threads of the block are loops: every region between two barriers is one `for (tid …)` loop,
 * a thread's registers are row `tid` of a `[numThreads][n]` array, shared memory is a plain array
 * and a lane exchange is a store to a scratch array in one loop and a load in the next.
 */
export type TileDialectName = 'host' | 'cuda';

/** Options of {@link BlockEmitter}. */
export interface BlockEmitterOptions {
  /** Threads per block (CK's kBlockSize): the launch must use exactly this many (x only). */
  readonly numThreads: number;
  /** Index emission options (kernel symbols of symbolic lengths, magic-number source). */
  readonly index?: IndexEmitterOptions;
  /**
   * CUDA/HIP: the calling thread's id in [0, numThreads) (`int`) when the emitter's threads are one
   * group of the block's (one of several consumer groups that each run the same tile program);
   * default `threadIdx.x`, and then the launch must use exactly numThreads threads.
   */
  readonly tid?: Expr;
}

/** Where per-thread code is being emitted: the block to append to and this thread's id. */
export interface ThreadScope {
  readonly b: BlockBuilder;
  /** The flat thread id in [0, numThreads) (`int`). */
  readonly tid: Expr;
  readonly block: BlockEmitter;
}

/**
 * Per-thread storage of `length` elements (a distributed tensor's thread buffer): `T name[length]`
 * in CUDA, `T name[numThreads][length]` in host code. Access it from a {@link ThreadScope}.
 */
export class RegisterArray {
  readonly name: string;
  readonly type: CType;
  readonly length: number;
  readonly variable: VarExpr;
  readonly dialect: TileDialectName;

  constructor(variable: VarExpr, type: CType, length: number, dialect: TileDialectName) {
    this.variable = variable;
    this.name = variable.name;
    this.type = type;
    this.length = length;
    this.dialect = dialect;
  }

  /** Element `d` of the calling thread's buffer (an lvalue). */
  at(t: ThreadScope, d: ExprLike): Expr {
    return this.dialect === 'cuda' ? index(this.variable, d) : index(index(this.variable, t.tid), d);
  }

  /** Element `d` of thread `thread`'s buffer: host dialect only (CUDA threads cannot read each other's registers). */
  ofThread(thread: ExprLike, d: ExprLike): Expr {
    if (this.dialect === 'cuda')
      throw new TileEmitError('RegisterArray.ofThread', "another thread's registers are readable only in the host dialect", this.name);
    return index(index(this.variable, thread), d);
  }
}

/**
 * Emits a thread block's program into one function body for a dialect (see
 * {@link TileDialectName}). Code that one thread runs goes inside `threads(...)` regions; `sync()`
 * separates regions that communicate through shared memory. Postcondition (tested by running the
 * host dialect with g++ against the TS evaluators, and compiling the CUDA dialect with nvcc):
 * both dialects compute the same thing for a launch of `numThreads` threads.
 */
export class BlockEmitter {
  readonly b: BlockBuilder;
  readonly target: Target;
  readonly dialect: TileDialectName;
  readonly numThreads: number;
  /** Index emitter whose prologue is the function-level block (magic numbers are hoisted there). */
  readonly indexEmitter: IndexEmitter;
  readonly indexOptions: IndexEmitterOptions;
  readonly #cudaTid: Expr | undefined;

  /**
   * A block-level counted loop (e.g. the K loop of a GEMM main loop): `body` gets an emitter for the
   * loop body, where windows can be moved and `threads` regions emitted; the loop variable is
   * uniform across the block.
   */
  forRange(spec: ForRangeSpec, body: (block: BlockEmitter, i: VarExpr) => void): void {
    this.b.forRange(spec, (inner, i) =>
      body(new BlockEmitter(inner, this.target, { numThreads: this.numThreads, index: this.indexOptions }, this), i),
    );
  }

  constructor(b: BlockBuilder, target: Target, options: BlockEmitterOptions, parent?: BlockEmitter) {
    const n = options.numThreads;
    if (!Number.isSafeInteger(n) || n < 1 || n > 1024)
      throw new TileEmitError('BlockEmitter numThreads', 'must be an integer in [1, 1024]', String(n));
    this.b = b;
    this.target = target;
    // The device dialect serves CUDA and HIP alike: both spell threads, barriers, __shared__ and shuffles through the target.
    this.dialect = target.name === 'host' ? 'host' : 'cuda';
    if (this.dialect === 'cuda' && target.language !== 'cuda' && target.language !== 'hip')
      throw new TileEmitError('BlockEmitter target', 'tile emission supports the host, CUDA and HIP targets', target.name);
    this.numThreads = n;
    this.indexOptions = options.index ?? {};
    // A nested emitter (loop body) shares its parent's hoisted index code and thread id.
    this.indexEmitter = parent?.indexEmitter ?? new IndexEmitter(b, this.indexOptions);
    // The launch uses exactly numThreads threads: that promise is the tid's range.
    this.#cudaTid =
      this.dialect !== 'cuda'
        ? undefined
        : parent !== undefined
          ? parent.#cudaTid
          : (options.tid ?? b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, n - 1] }));
  }

  /** The warp size of the dialect (host code models CUDA's 32 lanes). */
  get warpSize(): number {
    return this.target.warpSize ?? 32;
  }

  /** Declares a per-thread buffer at function level (see {@link RegisterArray}). */
  registers(name: string, type: CType, length: number): RegisterArray {
    const n = Math.max(1, length);
    const t = this.dialect === 'cuda' ? array(type, n) : array(array(type, n), this.numThreads);
    return new RegisterArray(this.b.declare(name, t, null, { storage: 'mutable' }), type, n, this.dialect);
  }

  /** Declares block-shared storage of `length` elements (`__shared__` in CUDA, a plain array on host). */
  shared(name: string, type: CType, length: number, align = 16): VarExpr {
    if (this.dialect === 'cuda') return this.target.declareShared(this.b, name, type, length, { align });
    return this.b.declare(name, array(type, length), null, { storage: 'mutable', qualifiers: [`alignas(${align})`] });
  }

  /** One region of per-thread code: inline in CUDA (all threads run it), a loop over the threads on host. */
  threads(body: (t: ThreadScope) => void): void {
    if (this.dialect === 'cuda') {
      this.b.block((inner) => body({ b: inner, tid: this.#cudaTid!, block: this }));
      return;
    }
    this.b.forRange({ name: 'tid', to: this.numThreads }, (inner, tid) => body({ b: inner, tid, block: this }));
  }

  /** A block-wide barrier between regions (`__syncthreads()`; on host the loops already run in order). */
  sync(): void {
    if (this.dialect === 'cuda') this.b.push(this.target.syncThreads());
    else this.b.comment('barrier: the next thread loop starts after every thread finished this one');
  }
}
