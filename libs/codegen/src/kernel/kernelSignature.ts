import { ArgumentError } from '@tilekit/numeric';
import type { BlockBuilder } from '../blockBuilder.ts';
import { TargetFeatureError } from '../errors.ts';
import { isIdentifier } from '../expr.ts';
import { defineFunction } from '../function.ts';
import type { FunctionDef, Param, ParamSpec, ParamVars } from '../function.ts';
import type { SourceBuilder } from '../sourceBuilder.ts';
import type { Target, TargetName } from '../target.ts';
import {
  paramAlign,
  paramCType,
  paramSize,
  SCALAR_PARAM_KINDS,
  TENSOR_MAP_BYTES,
  tensorMapType,
  type KernelParam,
  type ParamValue,
  type UnpackedValue,
} from './kernelParam.ts';

/**
 * Where the parameter block starts in constant bank 0, per target. The driver aligns every
 * parameter in ABSOLUTE bank addresses, so a parameter aligned to more than the base's own
 * alignment (a 64-byte tensor map: base 0x160 on sm_75..sm_89, 0x210 on sm_90) lands at an offset
 * that is not a multiple of 64 within the block. Read off nvcc's cubins (EIATTR_PARAM_CBANK); the
 * nvcc test of this package checks every offset against the cubin's EIATTR_KPARAM_INFO.
 */
export const KERNEL_PARAM_BASE: Readonly<Record<TargetName, number>> = Object.freeze({
  host: 0,
  sm_80: 0x160,
  sm_90a: 0x210,
  gfx942: 0,
});

/** The most parameter bytes a kernel may take (CUDA 12.1+ on Volta and later). */
export const MAX_KERNEL_PARAM_BYTES = 32764;

/** One parameter's place in the parameter buffer. */
export interface ArgumentField {
  readonly name: string;
  readonly index: number;
  readonly param: KernelParam;
  readonly offset: number;
  readonly size: number;
  readonly align: number;
}

/**
 * The byte layout of a kernel's parameters on one target: exactly the driver's parameter block
 * (`cuFuncGetParamInfo` offsets and sizes). `bytes` is the end of the last parameter.
 */
export interface ArgumentLayout {
  readonly target: TargetName;
  readonly base: number;
  readonly fields: readonly ArgumentField[];
  readonly bytes: number;
}

/** Packed arguments: parameter i is `bytes[offsets[i] .. offsets[i] + sizes[i])` (runtime's `PackedKernelArgs`). */
export interface PackedArguments {
  readonly bytes: Uint8Array;
  readonly offsets: readonly number[];
  readonly sizes: readonly number[];
}

/** A kernel's parameter declarations, by name, in order. */
export type KernelParams = Readonly<Record<string, KernelParam>>;

/** The values `pack` takes, typed by the declarations. */
export type KernelArgValues<P extends KernelParams> = { readonly [K in keyof P]: ParamValue<P[K]> };

/** What `unpack` returns, typed by the declarations. */
export type KernelArgUnpacked<P extends KernelParams> = { readonly [K in keyof P]: UnpackedValue<P[K]> };

/**
 * Any signature, seen without its parameter types: what launchers and catalogs that hold several
 * kernels need (`KernelSignature<P>` is invariant in `P`, so a list of them needs this view).
 */
export interface AnyKernelSignature {
  readonly name: string;
  readonly target: Target;
  readonly layout: ArgumentLayout;
  pack(values: Readonly<Record<string, unknown>>): PackedArguments;
  unpack(bytes: Uint8Array): Readonly<Record<string, unknown>>;
}

/** Options of the emitted entry point. */
export interface KernelEntryOptions {
  /** `__launch_bounds__(maxThreads[, minBlocksPerSm])`. */
  readonly launchBounds?: { readonly maxThreads: number; readonly minBlocksPerSm?: number };
  /** Extra attributes between the return type and the name. */
  readonly attributes?: readonly string[];
}

/**
 * Computes the driver's parameter layout: in declaration order, each parameter at the first
 * offset whose absolute bank address `base + offset` is a multiple of its alignment.
 * Postconditions (property-tested): offsets ascend, do not overlap, and `base + offset` is a
 * multiple of each parameter's alignment; equal to nvcc's layout (checked on cubins).
 */
export function argumentLayout(params: readonly (readonly [string, KernelParam])[], target: TargetName): ArgumentLayout {
  const base = KERNEL_PARAM_BASE[target];
  let end = 0;
  const fields = params.map(([name, param], index) => {
    const size = paramSize(param);
    const align = paramAlign(param);
    const offset = Math.ceil((base + end) / align) * align - base;
    end = offset + size;
    return Object.freeze({ name, index, param, offset, size, align });
  });
  return Object.freeze({ target, base, fields: Object.freeze(fields), bytes: end });
}

const U64 = 1n << 64n;

function toBigInt(where: string, value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new ArgumentError(where, `must be ${what}`, value);
}

/**
 * A kernel's signature, declared once: the parameters (typed scalars with optional value ranges,
 * pointers with address alignment, tensor maps) in order, for one target. From it come both
 * sides of the launch ABI, so they cannot disagree:
 *
 * - `defineEntry` emits the `extern "C" __global__` entry with exactly these parameters;
 * - `layout` is the byte layout of the parameter block, `pack` writes values into it (after
 *   checking each against its declaration) and `unpack` reads them back.
 *
 * ```ts
 * const sig = new KernelSignature('scale', sm90a, { out: kernelParam.pointer(float32, { align: 16 }), n: kernelParam.i32({ range: [1, 1 << 30] }) });
 * sig.defineEntry(src, {}, (b, { out, n }) => { ... });
 * kernel.launch(config, sig.pack({ out: buffer, n: 1024 }));   // runtime's Kernel.launch
 * ```
 */
export class KernelSignature<P extends KernelParams = KernelParams> {
  readonly name: string;
  readonly target: Target;
  readonly params: P;
  readonly layout: ArgumentLayout;

  constructor(name: string, target: Target, params: P) {
    if (!isIdentifier(name)) throw new ArgumentError('name', 'a kernel name must be a C identifier', name);
    if (target.name === 'host') throw new TargetFeatureError('host', 'kernel entry points (__global__)');
    const entries = Object.entries(params);
    for (const [key, p] of entries) {
      if (!isIdentifier(key)) throw new ArgumentError(`${name} parameter`, 'a parameter name must be a C identifier', key);
      if (typeof p !== 'object' || p === null || !['scalar', 'pointer', 'tensorMap'].includes((p as KernelParam).kind)) {
        throw new ArgumentError(`${name}.${key}`, 'must be a kernelParam declaration', p);
      }
      if (p.kind === 'tensorMap' && target.language !== 'cuda') throw new TargetFeatureError(target.name, 'tensor map parameters');
    }
    this.name = name;
    this.target = target;
    this.params = Object.freeze({ ...params });
    this.layout = argumentLayout(entries, target.name);
    if (this.layout.bytes > MAX_KERNEL_PARAM_BYTES) {
      throw new ArgumentError(`${name} parameters`, `must take at most ${MAX_KERNEL_PARAM_BYTES} bytes`, this.layout.bytes);
    }
  }

  /** The parameter names in declaration order. */
  get names(): readonly (keyof P & string)[] {
    return this.layout.fields.map((f) => f.name as keyof P & string);
  }

  /**
   * Checks `values` against the declarations and writes them into a fresh parameter buffer. Throws
   * `ArgumentError` naming `<kernel>.<param>` and the rule for: a missing or unknown parameter, a
   * value of the wrong type, an integer outside its type or declared range, a null pointer (unless
   * nullable), an address not a multiple of the declared alignment, a tensor map not 128 bytes.
   */
  pack(values: KernelArgValues<P>): PackedArguments {
    if (typeof values !== 'object' || values === null) throw new ArgumentError(`${this.name} arguments`, 'must be an object', values);
    for (const key of Object.keys(values)) {
      if (!Object.hasOwn(this.params, key)) {
        throw new ArgumentError(`${this.name}.${key}`, `is not a parameter of ${this.name} (parameters: ${this.names.join(', ')})`);
      }
    }
    const bytes = new Uint8Array(this.layout.bytes);
    const view = new DataView(bytes.buffer);
    for (const field of this.layout.fields) {
      const where = `${this.name}.${field.name}`;
      if (!Object.hasOwn(values, field.name)) throw new ArgumentError(where, 'is required');
      writeField(view, bytes, field, (values as Record<string, unknown>)[field.name], where);
    }
    return { bytes, offsets: this.layout.fields.map((f) => f.offset), sizes: this.layout.fields.map((f) => f.size) };
  }

  /** Reads a parameter buffer back into values (64-bit integers and pointers as bigint). */
  unpack(bytes: Uint8Array): KernelArgUnpacked<P> {
    if (!(bytes instanceof Uint8Array) || bytes.length < this.layout.bytes) {
      throw new ArgumentError(`${this.name} bytes`, `must be a Uint8Array of at least ${this.layout.bytes} bytes`, bytes?.length);
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out: Record<string, unknown> = {};
    for (const f of this.layout.fields) out[f.name] = readField(view, bytes, f);
    return out as KernelArgUnpacked<P>;
  }

  /**
   * Emits the kernel's entry point into `src`: `extern "C" __global__ void <name>(<params>)` with
   * the declared parameters in order (integer ranges attached, so the body's simplifier may use
   * them; tensor maps as `const __grid_constant__ tk_tensor_map`). `body` receives the block and
   * the parameters as variables. Returns the function.
   */
  defineEntry(src: SourceBuilder, options: KernelEntryOptions, body: (b: BlockBuilder, params: ParamVars<P>) => void): FunctionDef {
    const specs: Record<string, ParamSpec> = {};
    for (const f of this.layout.fields) {
      const p = f.param;
      specs[f.name] = p.kind === 'scalar' && p.range !== null ? { type: paramCType(p), range: p.range } : paramCType(p);
    }
    const attributes = [...(options.attributes ?? [])];
    if (options.launchBounds !== undefined) {
      attributes.unshift(this.target.launchBounds(options.launchBounds.maxThreads, options.launchBounds.minBlocksPerSm));
    }
    const fn = defineFunction<Record<string, ParamSpec>>(
      { name: this.name, params: specs, qualifiers: this.target.kernelQualifiers(), attributes, scope: src.scope },
      (b, vars) => body(b, vars as ParamVars<P>),
    );
    // Tensor maps must be declared `const __grid_constant__` (TMA reads them where the driver put
    // them); only the declaration changes, the body keeps the plain struct type.
    const declared: FunctionDef = Object.freeze({
      ...fn,
      params: Object.freeze(
        fn.params.map((p): Param => (this.params[p.name]?.kind === 'tensorMap' ? Object.freeze({ ...p, type: gridConstantTensorMap }) : p)),
      ),
    });
    return src.add(declared);
  }
}

/** The declaration-only spelling of a tensor-map parameter (never used in expressions). */
const gridConstantTensorMap = Object.freeze({ ...tensorMapType, cpp: `const __grid_constant__ ${tensorMapType.cpp}` });

function writeField(view: DataView, bytes: Uint8Array, field: ArgumentField, value: unknown, where: string): void {
  const p = field.param;
  const at = field.offset;
  if (p.kind === 'tensorMap') {
    if (!(value instanceof Uint8Array) || value.length !== TENSOR_MAP_BYTES) {
      throw new ArgumentError(
        where,
        `must be the ${TENSOR_MAP_BYTES} bytes of an encoded tensor map`,
        value instanceof Uint8Array ? `${value.length} bytes` : typeof value,
      );
    }
    bytes.set(value, at);
    return;
  }
  if (p.kind === 'pointer') {
    const raw = typeof value === 'object' && value !== null && 'ptr' in value ? (value as { ptr: unknown }).ptr : value;
    const ptr = toBigInt(where, raw, 'a device pointer (bigint, or an object with a bigint ptr)');
    if (ptr < 0n || ptr >= U64) throw new ArgumentError(where, 'must be a pointer in [0, 2^64)', ptr);
    if (ptr === 0n && !p.nullable) throw new ArgumentError(where, 'must not be a null pointer');
    if (ptr % BigInt(p.align) !== 0n) throw new ArgumentError(where, `must be aligned to ${p.align} bytes`, `0x${ptr.toString(16)}`);
    view.setBigUint64(at, ptr, true);
    return;
  }
  const info = SCALAR_PARAM_KINDS[p.scalar];
  if (info.type.kind === 'float') {
    if (typeof value !== 'number') throw new ArgumentError(where, `must be a number (${info.type.cpp})`, value);
    if (p.scalar === 'f32') view.setFloat32(at, value, true);
    else view.setFloat64(at, value, true);
    return;
  }
  const t = info.type;
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new ArgumentError(where, `must be an integer (${t.cpp})`, value);
  if (typeof value !== 'number' && typeof value !== 'bigint') throw new ArgumentError(where, `must be an integer (${t.cpp})`, value);
  if (typeof value === 'bigint' && t.bits < 64) throw new ArgumentError(where, `must be a number (${t.cpp})`, value);
  const v = BigInt(value);
  if (v < t.min || v > t.max) throw new ArgumentError(where, `must fit in ${t.cpp} [${t.min}, ${t.max}]`, value);
  if (p.range !== null && (v < p.range.min || v > p.range.max)) {
    throw new ArgumentError(where, `must lie in its declared range [${p.range.min}, ${p.range.max}]`, value);
  }
  switch (p.scalar) {
    case 'i8':
      view.setInt8(at, Number(v));
      return;
    case 'u8':
      view.setUint8(at, Number(v));
      return;
    case 'i16':
      view.setInt16(at, Number(v), true);
      return;
    case 'u16':
      view.setUint16(at, Number(v), true);
      return;
    case 'i32':
      view.setInt32(at, Number(v), true);
      return;
    case 'u32':
      view.setUint32(at, Number(v), true);
      return;
    case 'i64':
      view.setBigInt64(at, v, true);
      return;
    default:
      view.setBigUint64(at, v, true);
  }
}

function readField(view: DataView, bytes: Uint8Array, field: ArgumentField): unknown {
  const p = field.param;
  const at = field.offset;
  if (p.kind === 'tensorMap') return bytes.slice(at, at + TENSOR_MAP_BYTES);
  if (p.kind === 'pointer') return view.getBigUint64(at, true);
  switch (p.scalar) {
    case 'i8':
      return view.getInt8(at);
    case 'u8':
      return view.getUint8(at);
    case 'i16':
      return view.getInt16(at, true);
    case 'u16':
      return view.getUint16(at, true);
    case 'i32':
      return view.getInt32(at, true);
    case 'u32':
      return view.getUint32(at, true);
    case 'i64':
      return view.getBigInt64(at, true);
    case 'u64':
      return view.getBigUint64(at, true);
    case 'f32':
      return view.getFloat32(at, true);
    default:
      return view.getFloat64(at, true);
  }
}
