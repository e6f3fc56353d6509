import { describe, expect, it } from 'vitest';
import { describeCron, inZone } from './cron';

describe('describeCron', () => {
  it.each([
    ['* * * * *', 'every minute'],
    ['*/15 * * * *', 'every 15 minutes'],
    ['0 * * * *', 'every hour, on the hour'],
    ['30 * * * *', 'every hour at minute 30'],
    ['0 9 * * *', 'at 09:00'],
    ['0 9 * * 1-5', 'at 09:00, on weekdays'],
    ['30 8,17 * * 1', 'at 08:30 and 17:30, on Monday'],
    ['0 9 1 * *', 'at 09:00, on day 1 of the month'],
    ['0 0 1 1 *', 'at 00:00, on day 1 of the month, in January'],
    ['15 */2 * * *', 'every 2 hours at minute 15'],
    ['0 9-17 * * 1-5', 'every hour from 09:00 to 17:00, on weekdays'],
    ['0 10 * * 0,6', 'at 10:00, on Sunday and Saturday'],
    ['@daily', 'every day at 00:00'],
    ['@every 1h30m', 'every 1 h 30 min'],
    ['@every 5m', 'every 5 min'],
  ])('%s is %s', (expr, words) => expect(describeCron(expr)).toBe(words));

  it('leaves shapes it does not know to the expression', () => {
    expect(describeCron('5/10 1-2/3 * * *')).toBe('');
    expect(describeCron('0 9 * * MON')).toBe('');
    expect(describeCron('nonsense')).toBe('');
  });
});

describe('inZone', () => {
  it("says the time in the job's zone, naming it", () => {
    expect(inZone('2026-03-02T08:00:00Z', 'Europe/Berlin')).toMatch(/09:00 \(Europe\/Berlin\)$/);
    expect(inZone('2026-03-02T08:00:00Z', 'America/New_York')).toMatch(/03:00 \(America\/New_York\)$/);
    expect(inZone(null, 'UTC')).toBe('');
  });
});
