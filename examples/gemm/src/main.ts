// Example: C = A·B generated from @tilekit/gemm's pipeline, compiled, launched, validated and timed.
//   npx tsx --conditions=@tilekit/source examples/gemm/src/main.ts -m=4096 -n=4096 -k=4096 -prec=bf16 -v=1
//   ... -m=4097 -n=4095 -k=4100 -stride_a=4104 -stride_b=4104 -b=2        ... -?  lists every flag
//   ... -arch=sm80 -m=4096 -n=4096 -k=4096   the sm_80 kernels (cp.async + mma.sync), built for this GPU
import { runCli } from '@tilekit/host';
import { gemmParser, runGemmExample } from './gemmExample.ts';

await runCli(gemmParser, process.argv.slice(2), (args) => runGemmExample(args));
