// BlockEmitter's thread id: threadIdx.x by default, or the id the caller gives when the emitter's
// threads are one group of the block's (a consumer slice of an attention kernel).
import { cast, int32, sm90a, SourceBuilder, sub } from '@tilekit/codegen';
import { describe, expect, it } from 'vitest';
import { BlockEmitter } from './blockEmitter.ts';

function emitted(withTid: boolean): string {
  const src = new SourceBuilder(sm90a);
  src.function({ name: 'k', qualifiers: sm90a.kernelQualifiers(), params: {} }, (b) => {
    const group = withTid ? { tid: b.let('group_tid', int32, sub(cast(sm90a.threadIdx('x'), int32), 128)) } : {};
    const block = new BlockEmitter(b, sm90a, { numThreads: 128, ...group });
    const r = block.registers('r', int32, 1);
    block.threads((t) => t.b.assign(r.at(t, 0), t.tid));
  });
  return src.render();
}

describe('BlockEmitter tid', () => {
  it('is threadIdx.x by default and the given expression in a group of threads (nothing else changes)', () => {
    const own = emitted(false);
    const group = emitted(true);
    expect(own).toMatch(/const int tid = static_cast<int>\(threadIdx\.x\);/);
    expect(own).toMatch(/r\[0\] = tid;/);
    expect(group).not.toMatch(/const int tid =/);
    expect(group).toMatch(/const int group_tid = static_cast<int>\(threadIdx\.x\) - 128;/);
    expect(group).toMatch(/r\[0\] = group_tid;/);
  });
});
