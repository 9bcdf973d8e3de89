import { ArgumentError } from '@tilekit/numeric';

/**
 * Something a piece of emitted code needs at the top of its translation unit: a header, or a named
 * snippet of helper code (a target prelude function such as `tk_lane_id`). Types and calls carry
 * their requirements, and a source file collects them, so `#include <cuda_fp16.h>` appears exactly
 * when `__half` is used.
 */
export type Requirement = IncludeRequirement | SnippetRequirement;

/** `#include <header>` (angle brackets) or `#include "header"` (quotes), spelled as given. */
export interface IncludeRequirement {
  readonly kind: 'include';
  readonly header: string;
}

/**
 * A named block of helper lines emitted once, after the includes. Two snippets with the same name
 * must have the same lines; a snippet's own requirements are emitted before it.
 */
export interface SnippetRequirement {
  readonly kind: 'snippet';
  readonly name: string;
  readonly lines: readonly string[];
  readonly requires: readonly Requirement[];
}

/** An include requirement. `header` must be `<...>` or `"..."`. */
export function include(header: string): IncludeRequirement {
  if (!/^(<[^<>\s]+>|"[^"\s]+")$/.test(header)) {
    throw new ArgumentError('header', 'must be spelled <name> or "name"', header);
  }
  return Object.freeze({ kind: 'include', header });
}

/** A snippet requirement; `requires` are emitted before it. */
export function snippet(name: string, lines: readonly string[], requires: readonly Requirement[] = []): SnippetRequirement {
  return Object.freeze({ kind: 'snippet', name, lines: Object.freeze([...lines]), requires: Object.freeze([...requires]) });
}

/** The key under which two requirements are the same requirement. */
function keyOf(r: Requirement): string {
  return r.kind === 'include' ? `include:${r.header}` : `snippet:${r.name}`;
}

/**
 * Flatten requirements (snippets' own requirements first), dropping repeats; the order is otherwise
 * first appearance. Postcondition: every snippet appears after everything it requires, and each
 * include header / snippet name appears once. Throws when two different snippets share a name.
 */
export function orderRequirements(requirements: Iterable<Requirement>): Requirement[] {
  const out: Requirement[] = [];
  const seen = new Map<string, Requirement>();
  const visit = (r: Requirement): void => {
    const key = keyOf(r);
    const prior = seen.get(key);
    if (prior !== undefined) {
      if (prior.kind === 'snippet' && r.kind === 'snippet' && prior.lines.join('\n') !== r.lines.join('\n')) {
        throw new ArgumentError('requirements', `two different snippets are both named "${r.name}"`);
      }
      return;
    }
    seen.set(key, r);
    if (r.kind === 'snippet') r.requires.forEach(visit);
    out.push(r);
  };
  for (const r of requirements) visit(r);
  return out;
}
