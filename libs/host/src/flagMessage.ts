import type { ArgumentError } from '@tilekit/numeric';

/**
 * `text` without the ` (got <value>)` clauses that repeat a flag's value (written as is or
 * JSON-quoted): once the message starts with `-key=<value>`, stating the value again is noise.
 * Postcondition (tested): the result contains no ` (got <value>)` clause.
 */
export function withoutEcho(text: string, value: string): string {
  let out = text;
  for (const shown of new Set([value, JSON.stringify(value)])) out = out.split(` (got ${shown})`).join('');
  return out;
}

/**
 * The rule a library's ArgumentError states about a flag's value: its message without the leading
 * `<argument>: ` and without echoes of `value` (`withoutEcho`), to follow `-key=<value>: `.
 */
export function ruleOf(error: ArgumentError, value: string): string {
  const head = `${error.argument}: `;
  const rule = error.message.startsWith(head) ? error.message.slice(head.length) : error.message;
  return withoutEcho(rule, value);
}
