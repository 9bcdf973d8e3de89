// @tilekit/kernel-sparge: Sparge block-sparse attention. Re-exports only, by concept.
