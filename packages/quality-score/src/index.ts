export { scoreCall, scoreSample, scoreTrack } from './score.ts';
export type { CallSample, TrackSample } from './types.ts';
