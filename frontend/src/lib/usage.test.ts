import { describe, it, expect, afterEach } from 'vitest';
import { cleanup, render } from '@testing-library/svelte';
import { lastDays, shapeDays, niceMax, usd } from './usage';
import CostChart from '../components/CostChart.svelte';

describe('usage chart data', () => {
  afterEach(cleanup);

  it('the last 30 days end today (UTC), both ends inclusive', () => {
    expect(lastDays(new Date('2026-03-10T23:59:00Z'))).toEqual({ from: '2026-02-09', to: '2026-03-10' });
    // Late in the evening west of UTC it is already tomorrow in UTC: the server's days are UTC.
    expect(lastDays(new Date('2026-01-01T02:00:00Z')).to).toBe('2026-01-01');
    expect(lastDays(new Date('2024-03-01T00:00:00Z'), 2)).toEqual({ from: '2024-02-29', to: '2024-03-01' });
  });

  it('has 30 bars in order, the missing days as zero, the reported ones with their cost and tokens', () => {
    const { from, to } = lastDays(new Date('2026-03-10T12:00:00Z'));
    const bars = shapeDays(
      [
        { day: '2026-03-10', costUsd: 0.5, inputTokens: 1000, outputTokens: 200, reports: 2 },
        { day: '2026-02-09', costUsd: 1.25, inputTokens: 10, outputTokens: 5, reports: 1 },
        { day: '2026-02-20', costUsd: 0.012, inputTokens: 1200, outputTokens: 300, reports: 1 },
        { day: '2025-12-01', costUsd: 99, inputTokens: 1, outputTokens: 1, reports: 1 }, // outside the range: ignored
      ],
      from,
      to,
    );
    expect(bars).toHaveLength(30);
    expect(bars[0]).toEqual({ day: '2026-02-09', costUsd: 1.25, inputTokens: 10, outputTokens: 5, reports: 1 });
    expect(bars[29]).toEqual({ day: '2026-03-10', costUsd: 0.5, inputTokens: 1000, outputTokens: 200, reports: 2 });
    expect(bars[11]).toMatchObject({ day: '2026-02-20', costUsd: 0.012 });
    expect(bars.filter((b) => b.costUsd === 0)).toHaveLength(27);
    expect(bars[1]).toEqual({ day: '2026-02-10', costUsd: 0, inputTokens: 0, outputTokens: 0, reports: 0 });
    // Consecutive days, across the month's end.
    for (let i = 1; i < bars.length; i++) expect(Date.parse(bars[i].day) - Date.parse(bars[i - 1].day)).toBe(86_400_000);
  });

  it('an empty report is 30 zero bars', () => {
    const bars = shapeDays([], '2026-01-01', '2026-01-30');
    expect(bars).toHaveLength(30);
    expect(bars.every((b) => b.costUsd === 0 && b.reports === 0)).toBe(true);
  });

  it('rounds the axis up and formats dollars', () => {
    expect(niceMax(0)).toBe(0.01);
    expect(niceMax(0.73)).toBe(1);
    expect(niceMax(1.3)).toBe(2);
    expect(niceMax(2.2)).toBe(2.5);
    expect(niceMax(42)).toBe(50);
    expect(niceMax(100)).toBe(100);
    expect(usd(0)).toBe('$0');
    expect(usd(0.0042)).toBe('$0.0042');
    expect(usd(12.5)).toBe('$12.50');
  });

  it('draws one bar per day, its height proportional to the cost', () => {
    const days = shapeDays([{ day: '2026-01-02', costUsd: 2, inputTokens: 1, outputTokens: 1, reports: 1 }, { day: '2026-01-03', costUsd: 1, inputTokens: 1, outputTokens: 1, reports: 1 }], '2026-01-01', '2026-01-30');
    render(CostChart, { days });
    const bars = document.querySelectorAll('[data-testid="bar"]');
    expect(bars).toHaveLength(30);
    const h = (i: number) => Number(bars[i].querySelector('.bar')!.getAttribute('height'));
    expect(h(0)).toBe(0);
    expect(h(1)).toBeCloseTo(2 * h(2), 5);
    expect(bars[1].querySelector('title')!.textContent).toContain('2026-01-02: $2.00');
    expect(document.querySelector('svg')!.getAttribute('aria-label')).toContain('$3.00 in all');
  });
});
