// Score modifiers of the attention pipelines (hooks a policy carries): soft-capping and ALiBi.
export * from './fmhaScoreModifier.ts';
export * from './softCapScore.ts';
export * from './alibiScore.ts';
export * from './attentionScoreSetup.ts';
export * from './scoreModifierKeyPart.ts';
export * from './fmhaScoreModifiers.ts';
