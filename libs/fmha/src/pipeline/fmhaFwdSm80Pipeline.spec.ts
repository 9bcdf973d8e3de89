import fc from 'fast-check';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import { describe, expect, it } from 'vitest';
import { emitFmhaFwdSm80TestBody } from '../testing/fmhaFwdSm80TestBody.ts';
import { FmhaFwdSm80Pipeline, type FmhaFwdSm80Policy } from './fmhaFwdSm80Pipeline.ts';

const policy = (extra: Partial<FmhaFwdSm80Policy> = {}): FmhaFwdSm80Policy => ({
  dtype: 'fp16',
  headDim: 128,
  headDimV: 128,
  tileM: 128,
  tileN: 64,
  qResidence: 'registers',
  ...extra,
});

/** One event of the emitted schedule that touches shared memory or the cp.async groups. */
type Event =
  | { readonly kind: 'def'; readonly name: string; readonly expr: string }
  | { readonly kind: 'write' | 'read'; readonly name: string }
  | { readonly kind: 'commit' | 'sync' }
  | { readonly kind: 'wait'; readonly pending: number }
  | { readonly kind: 'if'; readonly cond: string; readonly body: readonly Event[] };

/** The events of a block of emitted C++ lines (nested `if` blocks kept as blocks). */
function parseEvents(lines: readonly string[]): Event[] {
  const root: Event[] = [];
  const stack: { events: Event[]; cond: string | undefined }[] = [{ events: root, cond: undefined }];
  const top = (): Event[] => stack[stack.length - 1]!.events;
  for (const line of lines) {
    let m: RegExpMatchArray | null;
    if ((m = line.match(/unsigned char\* const (\w+) = smem(?: \+ (.+))?;/))) top().push({ kind: 'def', name: m[1]!, expr: m[2] ?? '0' });
    else if ((m = line.match(/tk_cp_async_cg_16\((\w+) \+/))) top().push({ kind: 'write', name: m[1]! });
    else if ((m = line.match(/tk_ldmatrix_x4(?:_trans)?\(&\w+\[\d+\], \(*(\w+) \+/))) top().push({ kind: 'read', name: m[1]! });
    else if (line.includes('tk_cp_async_commit_group();')) top().push({ kind: 'commit' });
    else if ((m = line.match(/tk_cp_async_wait_group<(\d+)>\(\);/))) top().push({ kind: 'wait', pending: Number(m[1]) });
    else if (line.includes('__syncthreads();')) top().push({ kind: 'sync' });
    // Braces in order (an asm string's `{…}` opens and closes on its own line).
    for (const ch of line.replace(/"[^"]*"/g, '')) {
      if (ch === '{') stack.push({ events: [], cond: line.match(/^\s*if \((.*)\) \{$/)?.[1] });
      else if (ch === '}' && stack.length > 1) {
        const done = stack.pop()!;
        if (done.cond !== undefined && done.events.length > 0) top().push({ kind: 'if', cond: done.cond, body: done.events });
        else if (done.cond === undefined) top().push(...done.events);
      }
    }
  }
  // Blocks still open at the end (the function body itself) hand their events to the enclosing one.
  while (stack.length > 1) {
    const done = stack.pop()!;
    top().push(...(done.cond === undefined ? done.events : [{ kind: 'if' as const, cond: done.cond, body: done.events }]));
  }
  return root;
}

/**
 * Runs the emitted cp.async / barrier schedule for `n` key tiles and returns every violation: a
 * read of a tile that is not the one expected (K[j], V[j] in iteration j, Q) or not landed and made
 * visible by a barrier after its `wait_group`; a copy into a buffer whose previous contents were
 * read with no barrier since; groups left in flight at the end. A model of one thread (every thread
 * runs the same schedule; the barrier publishes what each waited for).
 */
function simulateSchedule(p: FmhaFwdSm80Pipeline, text: string, n: number): { violations: string[]; reads: Map<string, number> } {
  const lines = text.slice(text.indexOf('void fmha_body(')).split('\n');
  const loopAt = lines.findIndex((l) => /for \(int it = 0; it < k_iters; \+\+it\) \{/.test(l));
  let depth = 0;
  let loopEnd = loopAt;
  for (let i = loopAt; i < lines.length; i++) {
    depth += (lines[i]!.match(/\{/g) ?? []).length - (lines[i]!.match(/\}/g) ?? []).length;
    if (depth === 0) {
      loopEnd = i;
      break;
    }
  }
  const prologue = parseEvents(lines.slice(0, loopAt));
  const body = parseEvents(lines.slice(loopAt + 1, loopEnd));
  const epilogue = parseEvents(lines.slice(loopEnd + 1));
  const violations: string[] = [];
  const reads = new Map<string, number>();
  let syncs = 0;
  // Buffer (byte offset) → what it holds, when it landed (sync count at its wait) and when it was last read.
  const buffers = new Map<number, { label: string; landedAt: number | undefined; lastRead: number }>();
  const groups: { writes: Set<number> }[] = [];
  let open = new Set<number>();
  const regionOf = (offset: number): string => (offset < p.kOffset ? 'Q' : offset < p.vOffset ? 'K' : 'V');
  const run = (events: readonly Event[], it: number | undefined, defs: Map<string, number>): void => {
    for (const e of events) {
      switch (e.kind) {
        case 'def': {
          const m = e.expr.match(/^\(?(?:(cur|nxt) \* (\d+) \+ )?(\d+)\)?$/);
          if (m === null) throw new Error(`unparsed tile address ${e.expr}`);
          const stage = m[1] === undefined ? 0 : m[1] === 'cur' ? it! & 1 : (it! + 1) & 1;
          defs.set(e.name, stage * Number(m[2] ?? 0) + Number(m[3]));
          break;
        }
        case 'write': {
          const at = defs.get(e.name)!;
          const label = `${regionOf(at)}[${it === undefined ? 0 : it + 1}]`;
          const old = buffers.get(at);
          if (old !== undefined && old.label !== label && old.lastRead >= syncs)
            violations.push(`${label} copied into ${at} while ${old.label} may still be read (no barrier since)`);
          if (old?.label !== label) buffers.set(at, { label, landedAt: undefined, lastRead: -1 });
          open.add(at);
          break;
        }
        case 'read': {
          const at = defs.get(e.name)!;
          const region = regionOf(at);
          const want = `${region}[${region === 'Q' ? 0 : it!}]`;
          const b = buffers.get(at);
          if (b?.label !== want) violations.push(`iteration ${it}: read ${want} at ${at}, which holds ${b?.label ?? 'nothing'}`);
          else if (b.landedAt === undefined || b.landedAt >= syncs)
            violations.push(`iteration ${it}: read ${want} before it landed and a barrier published it`);
          else {
            b.lastRead = syncs;
            reads.set(want, (reads.get(want) ?? 0) + 1);
          }
          break;
        }
        case 'commit':
          groups.push({ writes: open });
          open = new Set();
          break;
        case 'wait':
          while (groups.length > e.pending) for (const at of groups.shift()!.writes) buffers.get(at)!.landedAt ??= syncs;
          break;
        case 'sync':
          syncs++;
          break;
        case 'if': {
          const holds = e.cond === 'more' ? it !== undefined && it + 1 < n : e.cond === 'k_iters > 0' ? n > 0 : undefined;
          if (holds === undefined) throw new Error(`unmodelled condition around copies or barriers: ${e.cond}`);
          if (holds) run(e.body, it, defs);
          break;
        }
      }
    }
  };
  const defs = new Map<string, number>();
  run(prologue, undefined, defs);
  for (let it = 0; it < n; it++) run(body, it, new Map(defs));
  run(epilogue, undefined, defs);
  if (groups.some((g) => g.writes.size > 0) || open.size > 0) violations.push('copies still in flight at the end');
  return { violations, reads };
}

describe('FmhaFwdSm80Pipeline (sm_80 attention forward: cp.async double buffering, ldmatrix + mma.sync)', () => {
  it('d128: 8 warps of 16 rows, Q resident (32 registers), shared memory Q | 2 K | 2 V (+1024 slack)', () => {
    const p = new FmhaFwdSm80Pipeline(policy());
    expect([p.warps, p.threads, p.qRegisters]).toEqual([8, 256, 32]);
    expect([p.qBytes, p.kStageBytes, p.vStageBytes]).toEqual([128 * 128 * 2, 64 * 128 * 2, 64 * 128 * 2]);
    expect([p.kOffset, p.vOffset, p.usedBytes, p.sharedBytes]).toEqual([32768, 65536, 98304, 99328]);
    expect(p.qk.policy.warps).toEqual([8, 1]);
    expect([p.pv.policy.tileN, p.pv.policy.tileK, p.pv.policy.bMajor]).toEqual([128, 64, 'MN']);
    expect(new FmhaFwdSm80Pipeline(policy({ qResidence: 'shared' })).qRegisters).toBe(0);
  });

  it('the copy distributions cover each Q, K and V tile exactly once with 16-byte vectors', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(32, 64, 128, 256),
        fc.constantFrom(32, 64, 128, 256),
        fc.constantFrom(64, 128),
        fc.constantFrom(32, 64, 128),
        (headDim, headDimV, tileM, tileN) => {
          let p: FmhaFwdSm80Pipeline;
          try {
            p = new FmhaFwdSm80Pipeline(policy({ headDim, headDimV, tileM, tileN, qResidence: headDim === 256 ? 'shared' : 'registers' }));
          } catch (error) {
            // Rejected only for a tile the 16-byte copies cannot split over the warps, or shared memory.
            return error instanceof BlockGemmPolicyError && /tile: .* must split into 16-byte vectors|shared memory/.test(error.message);
          }
          for (const [enc, rows, cols] of [
            [p.qCopyEncoding, tileM, headDim],
            [p.kCopyEncoding, tileN, headDim],
            [p.vCopyEncoding, tileN, headDimV],
          ] as const) {
            const seen = new Set<string>();
            for (let t = 0; t < p.threads; t++)
              for (let d = 0; d < enc.threadBufferSize; d++) seen.add(enc.calculateXIndexFromD(enc.partitionIndexOf(t), d).join(','));
            if (seen.size !== rows * cols || enc.threadBufferSize * p.threads !== rows * cols) return false;
          }
          return true;
        },
      ),
      { numRuns: 40 },
    );
  });

  it('the emitted cp.async / barrier schedule reads K[j] and V[j] in iteration j, landed and published, never overwriting a stage still read (any number of key tiles)', () => {
    for (const p of [
      new FmhaFwdSm80Pipeline(policy()),
      new FmhaFwdSm80Pipeline(policy({ headDim: 64, headDimV: 64, tileM: 64, tileN: 128, qResidence: 'shared' })),
    ]) {
      const text = emitFmhaFwdSm80TestBody(p, { masked: true });
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 9 }), (n) => {
          const { violations, reads } = simulateSchedule(p, text, n);
          expect(violations).toEqual([]);
          for (let j = 0; j < n; j++) {
            // Every ldmatrix of one k16 step reads the tile: K once per k step of Q·Kᵀ (× its B loads), V per k step of P·V.
            expect(reads.get(`K[${j}]`)).toBe(p.qk.bPlan.loads.length);
            expect(reads.get(`V[${j}]`)).toBe(p.pv.bPlan.loads.length);
          }
          expect(reads.get(`K[${n}]`)).toBeUndefined();
          expect(reads.get('Q[0]') ?? 0).toBe(p.qRegisters > 0 ? p.qk.aPlan.loads.length : n * p.qk.aPlan.loads.length);
        }),
        { numRuns: 20 },
      );
    }
  });

  it('the schedule model catches a missing barrier, a missing wait and a swapped stage', () => {
    const p = new FmhaFwdSm80Pipeline(policy());
    const text = emitFmhaFwdSm80TestBody(p);
    const firstLoopSync = text.indexOf('__syncthreads();', text.indexOf('for (int it'));
    const noSync = text.slice(0, firstLoopSync) + text.slice(firstLoopSync + '__syncthreads();'.length);
    expect(simulateSchedule(p, noSync, 3).violations.length).toBeGreaterThan(0);
    const noWait = text.replace(/tk_cp_async_wait_group<1>\(\);\s*__syncthreads\(\);\s*if \(more\)/, '__syncthreads();\n if (more)');
    expect(noWait).not.toBe(text);
    expect(simulateSchedule(p, noWait, 3).violations.length).toBeGreaterThan(0);
    const sameStage = text.replace('k_dst = smem + (nxt *', 'k_dst = smem + (cur *');
    expect(sameStage).not.toBe(text);
    expect(simulateSchedule(p, sameStage, 3).violations.length).toBeGreaterThan(0);
  });

  it('emits zero-filling 16-byte cp.async, Q fragments loaded once, ldmatrix for K and ldmatrix.trans for V, the C → A conversion of P', () => {
    const p = new FmhaFwdSm80Pipeline(policy({ dtype: 'bf16' }));
    const text = emitFmhaFwdSm80TestBody(p, { masked: true });
    const loop = text.slice(text.indexOf('for (int it'));
    expect(text).toMatch(/tk_cp_async_cg_16\(q_tile \+ \w+ \* 2, &q\[inside\w* \? \w+ : 0ll\], inside\w* \? 16 : 0\);/);
    expect(loop).toMatch(/tk_cp_async_cg_16\(k_dst \+ \w+ \* 2, &k\[inside\w* \? \w+ : 0ll\], inside\w* \? 16 : 0\);/);
    expect(loop).toMatch(/tk_cp_async_cg_16\(v_dst \+ \w+ \* 2, &v\[inside\w* \? \w+ : 0ll\], inside\w* \? 16 : 0\);/);
    // Q: 8 k16 steps × 1 m16 repeat, all before the loop.
    expect(text.match(/tk_ldmatrix_x4\(&q_frag\[\d+\], q_tile/g)).toHaveLength(8);
    expect(loop).not.toContain('q_tile');
    expect(loop.match(/tk_ldmatrix_x4\(&b_frag\[\d+\], \(*k_tile/g)).toHaveLength(8 * 4);
    expect(loop.match(/tk_ldmatrix_x4_trans\(&b_frag_1\[\d+\], \(*v_tile/g)).toHaveLength(4 * 8);
    expect(loop.match(/tk_mma_m16n8k16_f32_bf16_bf16_f32\(&s_acc/g)).toHaveLength(8 * 8);
    expect(loop.match(/tk_mma_m16n8k16_f32_bf16_bf16_f32\(&o_acc/g)).toHaveLength(4 * 16);
    // P = S's registers as they are: A fragment kk of P·V is C tiles 2kk, 2kk+1, one cvt.rn pack per pair.
    expect(loop).toContain('a_frag_1[0] = tk_pack_bf16x2(s_acc[0], s_acc[1]);');
    expect(loop).toContain('a_frag_1[3] = tk_pack_bf16x2(s_acc[30], s_acc[31]);');
    expect(loop).toContain('tk_exp2_approx(');
    expect(text.match(/__syncthreads\(\);/g)).toHaveLength(3);
    // Without LSE the epilogue writes none.
    expect(emitFmhaFwdSm80TestBody(p, { lse: false })).not.toMatch(/lse\[/);
  });

  it('emitted key loop of a small tile (d 32, 4 warps × 32 keys) (snapshot)', () => {
    const text = emitFmhaFwdSm80TestBody(new FmhaFwdSm80Pipeline(policy({ headDim: 32, headDimV: 32, tileM: 64, tileN: 32 })), {
      masked: true,
    });
    expect(text.slice(text.indexOf('for (int it'), text.indexOf('// epilogue'))).toMatchSnapshot();
  });

  it('rejects policies it cannot run, naming the field', () => {
    expect(() => new FmhaFwdSm80Pipeline(policy({ headDim: 96 }))).toThrow(/headDim.*32, 64, 128, 256/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ headDimV: 48 }))).toThrow(/headDimV/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ tileM: 96 }))).toThrow(/tileM.*16 query rows per warp/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ tileN: 24 }))).toThrow(/tileN/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ dtype: 'fp32' as 'fp16' }))).toThrow(/dtype/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ qResidence: 'l2' as 'shared' }))).toThrow(/qResidence/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ headDim: 256, headDimV: 256, tileN: 256 }))).toThrow(/shared memory.*163 KiB/);
    expect(() => new FmhaFwdSm80Pipeline(policy({ headDim: 32, tileM: 128, tileN: 16 }))).toThrow(BlockGemmPolicyError);
  });
});
