// Example: Sparge attention (block-map prediction, then the vsa/jenga sparse FMHA) generated from
// @tilekit/kernel-sparge, compiled, checked against the CPU references, run and timed.
//   npx tsx --conditions=@tilekit/source examples/sparge/src/main.ts -b=1 -h=8 -s=8192 -d=128 -topk=0.3 -print_sparsity=1
//   ... -s=512 -h=2 -d=64 -v=1 -cdfthreshd=0.9 -pv_mode=block       ... -? lists every flag
import { runCli } from '@tilekit/host';
import { spargeParser } from './spargeExampleFlags.ts';
import { runSpargeExample } from './spargeExampleRun.ts';

await runCli(spargeParser, process.argv.slice(2), (args) => runSpargeExample(args));
