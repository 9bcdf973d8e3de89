// Example: FFPA attention forward (and, with -bwd=1, backward) for large head dims, planned into column slices, compiled, launched, validated and timed.
//   npx tsx --conditions=@tilekit/source examples/ffpa/src/main.ts -b=2 -h=16 -s=4096 -d=1024 -mask=b -prec=bf16
//   ... -d=576 -d_v=512 -h_k=1 -lse=1       ... -mode=1 -s=1,17,259,4097 -d=640       ... -? lists every flag
//   ... -bwd=1 -d=768 -s=2048 (the backward dQ, dK, dV; O and LSE from the forward)
import { runCli } from '@tilekit/host';
import { ffpaParser, runFfpaExample } from './ffpaExample.ts';

await runCli(ffpaParser, process.argv.slice(2), (args) => runFfpaExample(args));
