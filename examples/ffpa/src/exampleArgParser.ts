// A CK-style parser whose help text ends with one more line (what the example does not do yet).
import { ArgParser } from '@tilekit/host';

type Empty = Record<never, never>;

/** An `ArgParser` whose help text ends with `footer` (one line: e.g. what the example does not do yet). */
export class ExampleArgParser<T extends object = Empty> extends ArgParser<T> {
  readonly footer: string;

  constructor(program: string, description: string, footer: string) {
    super(program, description);
    this.footer = footer;
  }

  override help(): string {
    return `${super.help()}\n${this.footer}`;
  }
}
