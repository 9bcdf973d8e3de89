// Micro-benchmark (not a test): TS evaluation throughput of a 4-level descriptor, in coordinates per
// second, so later code can judge what host-side layout evaluation costs.
//   npx tsx --conditions=@tilekit/source libs/layout/bench/evaluateThroughput.ts   (or: nx run @tilekit/layout:bench)
import {
  makeNaiveTensorDescriptor,
  makeTensorCoordinate,
  merge,
  moveTensorCoordinate,
  passThrough,
  rightPad,
  symbol,
  transformTensorDescriptor,
  unmerge,
  type TensorDescriptor,
} from '@tilekit/layout';

/** An FMHA-like view: (seqlen, nhead, hdim) strided → padded to tiles → (nhead·seqlen) rows → (tile, row-in-tile, hdim/8, 8). */
function fourLevel(seqlen: number | ReturnType<typeof symbol>, S: number, D: number): TensorDescriptor {
  const H = 8;
  const d0 = makeNaiveTensorDescriptor([seqlen, H, D], [H * 128, 128, 1], { vectorLength: 4 });
  const Sp = Math.ceil(S / 64) * 64;
  const Dp = Math.ceil(D / 32) * 32;
  const d1 = transformTensorDescriptor(
    d0,
    [rightPad(seqlen, Sp - S), passThrough(H), rightPad(D, Dp - D)],
    [[0], [1], [2]],
    [[0], [1], [2]],
  );
  const d2 = transformTensorDescriptor(d1, [merge([H, d1.lengths[0]!]), passThrough(Dp)], [[1, 0], [2]], [[0], [1]]);
  return transformTensorDescriptor(
    d2,
    [unmerge([(H * Sp) / 64, 64]), unmerge([Dp / 8, 8])],
    [[0], [1]],
    [
      [0, 1],
      [2, 3],
    ],
  );
}

function measure(label: string, run: (n: number) => number): void {
  run(20_000); // warm up
  let n = 50_000;
  for (;;) {
    const t0 = performance.now();
    const sink = run(n);
    const ms = performance.now() - t0;
    if (ms > 300 || n > 50_000_000) {
      console.log(
        `${label.padEnd(52)} ${(((n / ms) * 1000) / 1e6).toFixed(2).padStart(7)} M coordinates/s  (${n} in ${ms.toFixed(0)} ms, checksum ${sink})`,
      );
      return;
    }
    n *= 2;
  }
}

const S = 1000;
const D = 100;
for (const [name, desc, bindings] of [
  ['static', fourLevel(S, S, D), {}],
  ['symbolic seqlen', fourLevel(symbol('seqlen', { max: 1 << 20 }), S, D), { seqlen: S }],
] as const) {
  console.log(
    `4-level descriptor (${name}): ${desc.adaptor.transforms.length} transforms, lengths (${desc.lengths.map(String).join(', ')})`,
  );
  const bound = desc.bind(bindings);
  const L = bound.lengths;
  const idx = L.map(() => 0);
  measure('calculateOffset (full evaluation)', (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      idx[0] = i % L[0]!;
      idx[1] = (i >> 3) % L[1]!;
      idx[2] = (i >> 5) % L[2]!;
      idx[3] = i % L[3]!;
      sink += bound.calculateOffset(idx);
    }
    return sink;
  });
  measure('evaluate (offset + validity)', (n) => {
    let sink = 0;
    for (let i = 0; i < n; i++) {
      idx[0] = i % L[0]!;
      idx[1] = (i >> 3) % L[1]!;
      idx[2] = (i >> 5) % L[2]!;
      idx[3] = i % L[3]!;
      const e = bound.evaluate(idx);
      if (e.valid) sink += e.offset;
    }
    return sink;
  });
  measure('moveTensorCoordinate (step along the row, wraps)', (n) => {
    const c = makeTensorCoordinate(desc, [0, 0, 0, 0], bindings);
    const fwd = [0, 1, 0, 0];
    const back = [0, -(L[1]! - 1), 0, 0];
    let sink = 0;
    for (let i = 0; i < n; i++) {
      moveTensorCoordinate(desc, c, (i + 1) % L[1]! === 0 ? back : fwd);
      sink += c.offset;
    }
    return sink;
  });
}
