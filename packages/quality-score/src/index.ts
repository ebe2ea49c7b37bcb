export {
  addToCallScore,
  type CallScoreTotals,
  scoreCall,
  scoreCallTotals,
  scoreSample,
  scoreTrack,
} from './score.ts';
export type { CallSample, TrackSample } from './types.ts';
