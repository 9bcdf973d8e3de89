// Development probe (not the recorded suite): the sparse attention kernels alone, with seeded block
// maps of exact per-row counts, against the dense forward instance at b2 h16 d128 fp16. It lives in
// tools/ because it compares two operator packages (kernels do not import each other).
//   node .device/bench-_spargeFwd.mjs
import { Prng, summarizeTimes } from '@tilekit/host';
import { FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } from '@tilekit/fmha';
import { checkFmhaFwdProblem, FMHA_FWD_CATALOG, FmhaFwdKernel } from '@tilekit/kernel-fmha-fwd';
import { encodeSpargeLut, SPARGE_FWD_CATALOG, SpargeFwdInstance, SpargeFwdKernel } from '@tilekit/kernel-sparge';
import { encode } from '@tilekit/numeric';
import { Device, encodeTensorMapTiled, NvccCompiler, timeLaunches } from '@tilekit/runtime';

const device = Device.open(0);
const compiler = new NvccCompiler();
const b = 2;
const h = 16;
const d = 128;
for (const s of [16384]) {
  const problem = checkFmhaFwdProblem({ dtype: 'fp16', batch: b, nheadQ: h, hdimQ: d, seqlenQ: s, seqlenK: s });
  const n = b * h * s * d;
  const bits = new Uint16Array(n);
  for (let i = 0; i < n; i++) bits[i] = encode('fp16', ((i * 2654435761) % 1000) / 1000 - 0.5);
  const q = device.upload(bits);
  const o = device.alloc(n * 2);
  const encodeMap = (opts: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(device, opts);
  const dense = await FmhaFwdKernel.build(
    FMHA_FWD_CATALOG.find((i) => i.policy.dtype === 'fp16' && i.policy.headDim === d && i.policy.mask === 'none' && !i.policy.splitKv)!,
    { device, compiler },
  );
  const dl = dense.prepare(problem, { q, k: q, v: q, o }, encodeMap);
  const denseMs = summarizeTimes(timeLaunches(device, () => dl.launch(), { warmup: 3, repeat: 20 })).median;
  console.log(`s${s} dense ${dense.instance.name}: ${denseMs.toFixed(3)} ms`);
  const qB = s / 128;
  const kB = s / 128;
  const thr = device.upload(new Float32Array(h).fill(50));
  const q8 = device.alloc(n).fill(1);
  const scales = device.upload(new Float32Array(b * h * qB).fill(1 / 64));
  for (const topk of [1.0, 0.4, 0.1]) {
    const count = Math.max(1, Math.floor(topk * kB));
    const map = new Uint8Array(b * h * qB * kB);
    const rng = new Prng(3);
    for (let r = 0; r < b * h * qB; r++) {
      map[r * kB] = 1;
      let placed = 1;
      while (placed < count) {
        const j = Math.floor(rng.nextRange(0, kB));
        if (map[r * kB + j] === 0) {
          map[r * kB + j] = 1;
          placed++;
        }
      }
    }
    const lut = encodeSpargeLut({ batch: b, nhead: h, qBlocks: qB, kBlocks: kB, map });
    const dLut = device.upload(lut.lut);
    const dValid = device.upload(lut.validBlockNum);
    const dMap = device.upload(map);
    let reference: Uint16Array | undefined;
    for (const [pipeline, pvMode, int8, overlap] of [
      ['vsa', 'none', false, false],
      ['vsa', 'none', false, true],
      ['jenga', 'none', false, true],
      ['vsa', 'block', false, false],
      ['vsa', 'none', true, false],
      ['vsa', 'none', true, true],
    ] as const) {
      const base = SPARGE_FWD_CATALOG.find(
        (i) =>
          i.policy.pipeline === pipeline &&
          i.policy.dtype === 'fp16' &&
          i.policy.headDim === d &&
          i.policy.mask === 'none' &&
          (i.policy.pvGate !== undefined) === (pvMode !== 'none') &&
          (i.policy.qkOperand?.tag === 'int8') === int8,
      )!;
      const inst = overlap ? new SpargeFwdInstance({ ...base.policy, schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE }) : base;
      const kernel = await SpargeFwdKernel.build(inst, { device, compiler });
      const l = kernel.prepare(
        { ...problem, pipeline, pvMode, qBlocks: qB, kBlocks: kB },
        {
          q,
          k: q,
          v: q,
          o,
          lut: dLut,
          validBlockNum: dValid,
          blockMap: dMap,
          pvThreshold: thr,
          ...(int8 ? { q8, k8: q8, qScale: scales, kScale: scales } : {}),
        },
        encodeMap,
      );
      l.launch();
      device.synchronize();
      const out = new Uint16Array(o.copyToHost().buffer);
      let same = '';
      if (!int8 && pvMode === 'none') {
        if (reference === undefined) reference = out;
        else same = out.every((x, i) => x === reference![i]) ? ', O bitwise equal to vsa plain' : ', O DIFFERS from vsa plain';
      }
      const ms = summarizeTimes(timeLaunches(device, () => l.launch(), { warmup: 3, repeat: 20 })).median;
      console.log(
        `s${s} topk ${topk} (${count}/${kB} blocks) ${pipeline} pv=${pvMode}` +
          `${int8 ? ' int8' : ''}${overlap ? ' overlap' : ''}: ${ms.toFixed(3)} ms, ` +
          `${(denseMs / ms).toFixed(2)}× dense, ideal ${(kB / count).toFixed(2)}×${same}`,
      );
    }
    for (const x of [dLut, dValid, dMap]) x.dispose();
  }
  for (const x of [q, o, thr, q8, scales]) x.dispose();
}
