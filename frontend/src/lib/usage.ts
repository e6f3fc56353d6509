// Shaping the usage report for the Usage screen: the last 30 days (UTC), one bar per
// day with missing days as zero, and the scale of the hand-made SVG chart.
import type { UsageRow } from './types';

export interface DayBar {
  day: string; // YYYY-MM-DD (UTC)
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  reports: number;
}

/** YYYY-MM-DD of a date, in UTC (the server's days are UTC). */
export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** The range of the last `days` days ending today (UTC), both ends inclusive. */
export function lastDays(today: Date, days = 30): { from: string; to: string } {
  const to = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()));
  const from = new Date(to.getTime() - (days - 1) * 86_400_000);
  return { from: isoDay(from), to: isoDay(to) };
}

/** One bar per day from `from` to `to` (inclusive), in order; days without usage are zero. */
export function shapeDays(byDay: UsageRow[], from: string, to: string): DayBar[] {
  const have = new Map<string, UsageRow>();
  for (const r of byDay) if (r.day) have.set(r.day, r);
  const out: DayBar[] = [];
  const end = Date.parse(to + 'T00:00:00Z');
  for (let t = Date.parse(from + 'T00:00:00Z'); t <= end && out.length < 400; t += 86_400_000) {
    const day = isoDay(new Date(t));
    const r = have.get(day);
    out.push({
      day,
      costUsd: r?.costUsd ?? 0,
      inputTokens: r?.inputTokens ?? 0,
      outputTokens: r?.outputTokens ?? 0,
      reports: r?.reports ?? 0,
    });
  }
  return out;
}

/** A round top for the chart's axis (1, 2, 2.5, 5 × 10^n) at or above max; 1 cent when all is zero. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 0.01;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= max - 1e-12) return m * p;
  return 10 * p;
}

export function usd(v: number): string {
  if (v === 0) return '$0';
  if (v < 0.01) return '$' + v.toFixed(4);
  return '$' + v.toFixed(2);
}

export function tokens(v: number): string {
  return Math.round(v).toLocaleString('en-US');
}
