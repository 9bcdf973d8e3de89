// What a pipeline hook (a schedule, a Q·Kᵀ source, an output split) adds to an instance key.

/** Config fields (they change the hash) and name tags a hook adds to an instance key. */
export interface FmhaFwdKeyPart {
  readonly config: Readonly<Record<string, string | number | boolean>>;
  readonly tags: Readonly<Record<string, string>>;
}

const NONE: FmhaFwdKeyPart = Object.freeze({ config: Object.freeze({}), tags: Object.freeze({}) });

/** The key part of `hook`; nothing without one (so the default adds nothing to names and hashes). */
export function fmhaFwdKeyPartOf(hook: { readonly key: FmhaFwdKeyPart } | undefined): FmhaFwdKeyPart {
  return hook?.key ?? NONE;
}
