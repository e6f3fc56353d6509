import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { toasts, toast, toastError, dismiss, MAX_TOASTS, INFO_MS, ERROR_MS } from './toast.svelte';

describe('toasts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    for (const t of [...toasts]) dismiss(t.id);
  });
  afterEach(() => vi.useRealTimers());

  it('go away by themselves, errors later than the rest', () => {
    toast('Saved.');
    toastError(new Error('The cron expression is wrong.'));
    expect(toasts.map((t) => t.text)).toEqual(['Saved.', 'The cron expression is wrong.']);
    vi.advanceTimersByTime(INFO_MS);
    expect(toasts.map((t) => t.text)).toEqual(['The cron expression is wrong.']);
    vi.advanceTimersByTime(ERROR_MS - INFO_MS);
    expect(toasts).toHaveLength(0);
    expect(ERROR_MS).toBeGreaterThan(INFO_MS);
  });

  it(`show at most ${MAX_TOASTS}, dropping the oldest`, () => {
    for (let i = 1; i <= 5; i++) toast(`message ${i}`);
    expect(toasts.map((t) => t.text)).toEqual(['message 3', 'message 4', 'message 5']);
  });

  it('never repeat a message that shows: it stays, for longer', () => {
    toastError(new Error('offline'));
    vi.advanceTimersByTime(ERROR_MS - 1000);
    toastError(new Error('offline'));
    expect(toasts).toHaveLength(1);
    vi.advanceTimersByTime(2000); // past the first one's end: the repeat restarted it
    expect(toasts).toHaveLength(1);
    vi.advanceTimersByTime(ERROR_MS);
    expect(toasts).toHaveLength(0);
  });
});
