import { describe, expect, it } from 'vitest';
import { ago, presence, shortDuration } from './time';

const T = Date.parse('2026-05-04T10:00:00Z');
const before = (ms: number) => new Date(T - ms).toISOString();

describe('shortDuration and ago', () => {
  it('says durations in a few characters', () => {
    expect(shortDuration(3_000)).toBe('now');
    expect(shortDuration(45_000)).toBe('45 s');
    expect(shortDuration(12 * 60_000 + 5_000)).toBe('12 m');
    expect(shortDuration(3 * 3_600_000)).toBe('3 h');
    expect(shortDuration(5 * 86_400_000)).toBe('5 d');
    expect(shortDuration(-5_000)).toBe('now'); // a clock a little ahead of ours
  });
  it('says how long ago', () => {
    expect(ago(before(12 * 60_000), T)).toBe('12 m ago');
    expect(ago(before(1_000), T)).toBe('just now');
    expect(ago(null, T)).toBe('');
  });
});

describe('presence', () => {
  it('is online when seen within 2 minutes', () => {
    expect(presence(before(90_000), T)).toEqual({ online: true, stale: false, label: 'online' });
  });
  it('says when it was last seen', () => {
    expect(presence(before(10 * 60_000), T)).toEqual({ online: false, stale: false, label: 'last seen 10 m ago' });
  });
  it('is stale after an hour, or when never seen', () => {
    expect(presence(before(61 * 60_000), T)).toEqual({ online: false, stale: true, label: 'last seen 1 h ago' });
    expect(presence(null, T)).toEqual({ online: false, stale: true, label: 'never seen' });
  });
});
