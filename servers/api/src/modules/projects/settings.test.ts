import { describe, expect, it } from 'vitest';
import { DEFAULT_PROJECT_SETTINGS, readSettings } from './settings.ts';

describe('readSettings', () => {
  it('fills groups an older server did not store, and falls back group by group on invalid ones', () => {
    const stored = {
      webrtc: { enabled: true },
      privacy: { mode: 'paranoid' },
      allowedOrigins: ['https://a.example'],
    };
    expect(readSettings(stored)).toEqual({
      ...DEFAULT_PROJECT_SETTINGS,
      webrtc: { ...DEFAULT_PROJECT_SETTINGS.webrtc, enabled: true },
      allowedOrigins: ['https://a.example'],
    });
    expect(readSettings(null)).toEqual(DEFAULT_PROJECT_SETTINGS);
  });

  it('parses each stored object once, and each stored object on its own', () => {
    const stored = { ingest: { maxChunksPerSecond: 5 } };
    const first = readSettings(stored);
    expect(readSettings(stored)).toBe(first);
    const changed = { ingest: { maxChunksPerSecond: 7 } };
    expect(readSettings(changed).ingest.maxChunksPerSecond).toBe(7);
    expect(readSettings(stored).ingest.maxChunksPerSecond).toBe(5);
  });
});
