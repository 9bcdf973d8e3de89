// example_permute: generates the permute kernel the problem dispatches to, compiles it, prints the
// instance and its resources, computes the CPU reference (-v=1), and on a GPU runs, validates and
// times it. Without a CUDA device it says so and exits 0 after the CPU part.
import {
  ArgParseError,
  ArgParser,
  checkErr,
  fillTensor,
  flagErrorOf,
  formatTable,
  gbPerSec,
  HostTensor,
  parseFillSpec,
  summarizeTimes,
  type ParsedArgs,
} from '@tilekit/host';
import {
  compilePermuteInstance,
  findPermuteInstance,
  formatPermuteProblem,
  NoPermuteInstanceError,
  permuteBytesMoved,
  permuteReference,
  permuteShapes,
  PermuteKernel,
  selectPermuteInstance,
  type PermuteInstance,
  type PermuteProblem,
} from '@tilekit/kernel-permute';
import { ArgumentError } from '@tilekit/numeric';
import { Device, NvccCompiler, NvrtcCompiler, probe, timeLaunches, type Compiler, type DeviceBuffer } from '@tilekit/runtime';

/** The example's flags (CK style: `-key=value`, `-?` for help). */
export const permuteParser = new ArgParser(
  'example_permute',
  'tensor permute: bhsd <-> bshd (16-byte vectors) and 2-D transpose (swizzled shared memory)',
)
  .choice(
    'perm',
    'bhsd2bshd',
    ['bhsd2bshd', 'bshd2bhsd', 'transpose'],
    'permutation: [b,h,s,d] -> [b,s,h,d], its inverse, or [m,n] -> [n,m]',
  )
  .choice('prec', 'fp16', ['fp16', 'bf16', 'fp32'], 'data type')
  .int('b', 2, 'batch (bhsd2bshd, bshd2bhsd)', { min: 1 })
  .int('h', 8, 'heads', { min: 1 })
  .int('s', 1024, 'sequence length', { min: 1 })
  .int('d', 128, 'head dim (contiguous)', { min: 1 })
  .int('m', 1024, 'rows of the input (transpose)', { min: 1 })
  .int('n', 2048, 'columns of the input (transpose)', { min: 1 })
  .bool('v', true, 'validate against the CPU reference')
  .int('warmup', 5, 'untimed launches first', { min: 0 })
  .int('repeat', 20, 'timed launches (median reported)', { min: 1 })
  .int('seed', 11939, 'seed of the input fill')
  .string('init', 'uf:-2,2', 'input fill (uf, ui, nf, ni, tf, constant:v; with :a,b ranges)', (text) => void parseFillSpec(text, '-init'))
  .string('instance', '', 'run this catalog instance instead of the dispatched one', checkInstanceName)
  .choice('compiler', 'nvcc', ['nvcc', 'nvrtc'], 'kernel compiler (nvrtc: only where libnvrtc is installed)');

/** `-instance`: empty (dispatch) or the name of a catalog instance. */
function checkInstanceName(name: string): void {
  if (name !== '' && findPermuteInstance(name) === undefined)
    throw new ArgParseError('-instance', `-instance=${name}: no such instance in the permute catalog`);
}

type PermuteArgs = ParsedArgs<typeof permuteParser extends ArgParser<infer T> ? T : never>;

/** The problem the flags describe. */
export function problemFromArgs(args: PermuteArgs): PermuteProblem {
  const perm = args.get('perm');
  const dtype = args.get('prec');
  if (perm === 'transpose') return { kind: perm, dtype, m: args.get('m'), n: args.get('n') };
  return { kind: perm, dtype, b: args.get('b'), h: args.get('h'), s: args.get('s'), d: args.get('d') };
}

function pickInstance(args: PermuteArgs, problem: PermuteProblem): PermuteInstance {
  const name = args.get('instance');
  checkInstanceName(name);
  return name === '' ? selectPermuteInstance(problem) : findPermuteInstance(name)!;
}

// The problem field an ArgumentError names -> the flag it came from.
const FLAG_OF = {
  'problem.b': 'b',
  'problem.h': 'h',
  'problem.s': 's',
  'problem.d': 'd',
  'problem.m': 'm',
  'problem.n': 'n',
  'problem.dtype': 'prec',
} as const;

/** The compiler `-compiler` names; throws CompilerUnavailableError (typed: exit 2) before any work when it is missing. */
function makeCompiler(kind: 'nvcc' | 'nvrtc'): Compiler {
  return kind === 'nvcc' ? new NvccCompiler() : new NvrtcCompiler();
}

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * when no GPU is present), 1 when validation fails or no instance runs the problem. Flags that make
 * no problem throw ArgParseError, a missing `-compiler` CompilerUnavailableError (runCli: exit 2).
 */
export async function runPermuteExample(args: PermuteArgs, log: (line: string) => void = console.log): Promise<number> {
  const compiler = makeCompiler(args.get('compiler'));
  let problem: PermuteProblem;
  let instance: PermuteInstance;
  try {
    problem = problemFromArgs(args);
    instance = pickInstance(args, problem);
  } catch (error) {
    if (error instanceof NoPermuteInstanceError) {
      log(error.message);
      return 1;
    }
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw flagErrorOf(args, error, FLAG_OF);
    throw error;
  }
  const shapes = permuteShapes(problem);
  const launch = instance.launch(problem);
  log(`example_permute: ${formatPermuteProblem(problem)}: [${shapes.input.join(', ')}] -> [${shapes.output.join(', ')}]`);
  log(`instance: ${instance.name} (key ${instance.key.hash}), ${instance.vectorBytes}-byte vectors, ${instance.threads} threads`);
  log(`launch: grid [${launch.grid.join(', ')}], block [${launch.block.join(', ')}], ${instance.staticSharedBytes} B static shared memory`);

  const compiled = await compilePermuteInstance(instance, compiler);
  const r = compiled.resources;
  log(
    formatTable(
      ['compiler', 'arch', 'registers', 'shared (B)', 'spills st/ld (B)', 'stack (B)', 'cached'],
      [
        [
          compiled.compilerVersion.split('|')[0]!.trim(),
          compiled.arch,
          r.registers,
          r.sharedBytes,
          `${r.spillStores}/${r.spillLoads}`,
          r.stackFrame,
          compiled.cached,
        ],
      ],
    ),
  );

  const validate = args.get('v');
  const input = HostTensor.empty(problem.dtype, shapes.input);
  fillTensor(input, args.get('init'), args.get('seed'));
  let reference: HostTensor | undefined;
  if (validate) {
    const started = performance.now();
    reference = permuteReference(problem, input);
    log(`CPU reference: ${reference.size} elements in ${(performance.now() - started).toFixed(1)} ms`);
  }

  const probed = probe();
  if (!probed.driver || probed.deviceCount === 0) {
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernel ` +
        `was generated and compiled${validate ? ' and the CPU reference computed' : ''}; nothing ` +
        `ran on a GPU.`,
    );
    return 0;
  }
  const device = Device.open(0);
  const kernel = await PermuteKernel.build(instance, { device, compiler });
  let src: DeviceBuffer | undefined;
  let dst: DeviceBuffer | undefined;
  try {
    src = device.upload(input.bytes());
    dst = device.alloc(input.byteLength).fill(0);
    const run = kernel.prepare(problem, { src, dst }); // validated once, before any launch
    const t = summarizeTimes(timeLaunches(device, run.launch, { warmup: args.get('warmup'), repeat: args.get('repeat') }));
    const bytes = permuteBytesMoved(problem);
    log(
      `${device.name}: ${t.median.toFixed(4)} ms (median of ${t.n}; min ${t.min.toFixed(4)}, ` +
        `max ${t.max.toFixed(4)}), ${gbPerSec(bytes, t.median).toFixed(1)} GB/s (` +
        `${(bytes / 2 ** 30).toFixed(3)} GiB read + written)`,
    );
    if (!validate || reference === undefined) return 0;
    const out = dst.copyToHost();
    const storage = problem.dtype === 'fp32' ? new Float32Array(out.buffer) : new Uint16Array(out.buffer);
    const result = checkErr(HostTensor.fromStorage(problem.dtype, shapes.output, storage), reference, { rtol: 0, atol: 0, label: 'out' });
    log(result.message);
    log(`valid: ${result.ok ? 'yes' : 'no'}`);
    return result.ok ? 0 : 1;
  } finally {
    device.synchronize();
    src?.dispose();
    dst?.dispose();
    kernel.dispose();
  }
}
