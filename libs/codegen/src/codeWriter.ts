/**
 * A tiny indenting line writer (the "Doc" idea): every emitted line goes through `line`, nesting
 * through `indented`. Output is deterministic: `indent` spaces per level, `\n` line ends, no
 * trailing whitespace, a final newline.
 */
export class CodeWriter {
  readonly #lines: string[] = [];
  readonly #unit: string;
  #depth = 0;

  constructor(indent: number = 2) {
    this.#unit = ' '.repeat(indent);
  }

  /** Append one line at the current indentation (an empty string gives an empty line). */
  line(text: string): this {
    this.#lines.push(text === '' ? '' : `${this.#unit.repeat(this.#depth)}${text}`.trimEnd());
    return this;
  }

  /** Append an empty line, unless the output is empty or already ends with one. */
  blank(): this {
    if (this.#lines.length > 0 && this.#lines[this.#lines.length - 1] !== '') this.#lines.push('');
    return this;
  }

  /** Run `body` one level deeper. */
  indented(body: () => void): this {
    this.#depth += 1;
    try {
      body();
    } finally {
      this.#depth -= 1;
    }
    return this;
  }

  /** The text so far, ending with exactly one newline (empty when nothing was written). */
  toString(): string {
    const lines = [...this.#lines];
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }
}
