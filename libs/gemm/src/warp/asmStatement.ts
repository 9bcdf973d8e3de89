// The inline-asm text of the warp GEMM leaves: operand lists and one `asm volatile(...)` statement.

/** `%first, ..., %(first+count-1)` as a brace list. */
export function regList(first: number, count: number): string {
  return `{${Array.from({ length: count }, (_, i) => `%${first + i}`).join(', ')}}`;
}

/** `"c"(name[0]), "c"(name[1]), ...` */
export function asmOperands(constraint: string, name: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `"${constraint}"(${name}[${i}])`);
}

/** `xs` joined eight to a line. */
function chunk(xs: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < xs.length; i += 8) out.push(xs.slice(i, i + 8).join(', '));
  return out;
}

/** One `: ...` operand section of an asm statement (a bare `:` when empty), wrapped eight operands to a line. */
function section(xs: readonly string[]): string[] {
  return xs.length === 0 ? ['    :'] : chunk(xs).map((l, i, all) => `    ${i === 0 ? ': ' : '  '}${l}${i < all.length - 1 ? ',' : ''}`);
}

/** Lines of one `asm volatile(...)` statement with wrapped operand lists. */
export function asmStatement(
  templateLines: readonly string[],
  outputs: readonly string[],
  inputs: readonly string[],
  clobbers: readonly string[] = [],
): string[] {
  return [
    'asm volatile(',
    ...(templateLines.length === 0 ? ['    ""'] : templateLines.map((l) => `    ${JSON.stringify(`${l}\n`)}`)),
    ...section(outputs),
    ...section(inputs),
    ...(clobbers.length === 0 ? [] : [`    : ${clobbers.map((c) => JSON.stringify(c)).join(', ')}`]),
    ');',
  ];
}
