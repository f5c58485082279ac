import type { ScaleMode } from '../shared/demo';

// Defined by the dev plugin in scaled mode only (`npm run playground -- --instances N`).
declare const __PLAYGROUND_SCALE__: ScaleMode | null | undefined;

/** Scaled mode's settings, or `null` in the default single-process playground. */
export const SCALE: ScaleMode | null =
  typeof __PLAYGROUND_SCALE__ === 'undefined' ? null : __PLAYGROUND_SCALE__;
