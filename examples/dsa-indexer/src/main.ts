// Example: the DSA lightning indexer and exact top-k, generated, compiled, launched, validated and timed.
//   npx tsx --conditions=@tilekit/source examples/dsa-indexer/src/main.ts -mode=decode -b=2 -L=4096 -h=64 -next_n=1 -topk=2048 -v=1
//   ... -mode=prefill -s=128 -L=4096        ... -?  lists every flag
import { runCli } from '@tilekit/host';
import { runDsaIndexerExample } from './dsaIndexerExample.ts';
import { dsaIndexerParser } from './dsaIndexerFlags.ts';

await runCli(dsaIndexerParser, process.argv.slice(2), (args) => runDsaIndexerExample(args));
