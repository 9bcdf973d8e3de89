// Example: a tensor permute generated from layouts, compiled, launched, validated and timed.
//   npx tsx --conditions=@tilekit/source examples/permute/src/main.ts -perm=bhsd2bshd -prec=fp16 -b=2 -h=8 -s=1024 -d=128 -v=1
//   ... -perm=transpose -m=4096 -n=8192 -prec=fp32        ... -?  lists every flag
import { runCli } from '@tilekit/host';
import { permuteParser, runPermuteExample } from './permuteExample.ts';

await runCli(permuteParser, process.argv.slice(2), (args) => runPermuteExample(args));
