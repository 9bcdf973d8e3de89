import { ArgumentError } from '@tilekit/numeric';
import { DuplicateNameError } from './errors.ts';

/** C++17/20 keywords and alternative operator tokens: never usable as a name. */
export const cppKeywords: ReadonlySet<string> = new Set(
  (
    'alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class ' +
    'compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype ' +
    'default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline ' +
    'int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public ' +
    'register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch ' +
    'template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile ' +
    'wchar_t while xor xor_eq'
  ).split(' '),
);

/**
 * Words a generated local is never called: the keywords, plus names the CUDA/HIP dialects and the
 * standard library give meaning to (`threadIdx`, `warpSize`, `min`, `main`, `int32_t`...), so a local
 * never shadows a builtin the emitted code relies on. (An exact `reserve` of such a name, e.g. a
 * function called `main`, is allowed.)
 */
export const reservedWords: ReadonlySet<string> = new Set([
  ...cppKeywords,
  ...(
    'main NULL std threadIdx blockIdx blockDim gridDim warpSize min max abs assert size_t int8_t uint8_t ' +
    'int16_t uint16_t int32_t uint32_t int64_t uint64_t half dim3 uint3'
  ).split(' '),
]);

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkBase(base: string): void {
  if (!identifier.test(base)) throw new ArgumentError('name', 'must be a C++ identifier', base);
  // Identifiers with a double underscore anywhere, or _ + capital at the start, belong to the implementation.
  if (base.includes('__') || /^_[A-Z]/.test(base)) {
    throw new ArgumentError('name', 'must not contain "__" or start with "_" and a capital (reserved in C++)', base);
  }
}

/**
 * A lexical naming scope that hands out unique local names. A scope sees the names of its ancestors,
 * so a nested block never shadows an outer name (sibling blocks may reuse names).
 * Postconditions: `fresh` returns a valid identifier that is not reserved and not visible in this
 * scope; it is `base` itself when that is free, else `base_1`, `base_2`, ...
 */
export class NameScope {
  readonly parent: NameScope | null;
  readonly #names = new Set<string>();
  readonly #counters = new Map<string, number>();

  constructor(parent: NameScope | null = null) {
    this.parent = parent;
  }

  /** Is `name` declared in this scope or an ancestor? */
  declared(name: string): boolean {
    return this.#names.has(name) || (this.parent !== null && this.parent.declared(name));
  }

  /** Is `name` unavailable for a fresh local (declared here or above, or a reserved word)? */
  has(name: string): boolean {
    return reservedWords.has(name) || this.declared(name);
  }

  /** A fresh name derived from `base` (see the class postconditions), registered in this scope. */
  fresh(base: string): string {
    checkBase(base);
    let name = base;
    let n = this.#counters.get(base) ?? 0;
    while (this.has(name)) {
      n += 1;
      name = `${base}_${n}`;
    }
    this.#counters.set(base, n);
    this.#names.add(name);
    return name;
  }

  /**
   * Register `name` exactly (a parameter, an entry point): it is part of a contract and cannot be
   * renamed, so a clash is a `DuplicateNameError` and a keyword an `ArgumentError`.
   */
  reserve(name: string, where = 'scope'): string {
    checkBase(name);
    if (cppKeywords.has(name)) throw new ArgumentError('name', 'must not be a C++ keyword', name);
    if (this.declared(name)) throw new DuplicateNameError(name, where);
    this.#names.add(name);
    return name;
  }

  /** A nested scope. */
  child(): NameScope {
    return new NameScope(this);
  }
}
