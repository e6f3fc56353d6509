// A job's schedule in words ("at 09:00, Monday to Friday") and its times in the job's
// own time zone. Covers what people write; anything else is left to the expression.

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DESCRIPTORS: Record<string, string> = {
  '@yearly': 'every year on 1 January at 00:00',
  '@annually': 'every year on 1 January at 00:00',
  '@monthly': 'on the 1st of every month at 00:00',
  '@weekly': 'every Sunday at 00:00',
  '@daily': 'every day at 00:00',
  '@midnight': 'every day at 00:00',
  '@hourly': 'every hour, on the hour',
};

const num = (s: string) => (/^\d+$/.test(s) ? Number(s) : NaN);
const two = (n: number) => String(n).padStart(2, '0');

/** A list of values or ranges of a field, named by names (days, months) or as numbers. */
function list(field: string, names?: string[], offset = 0): string | null {
  const parts = field.split(',').map((p) => {
    const [a, b] = p.split('-');
    const name = (v: string) => {
      const n = num(v);
      if (Number.isNaN(n)) return null;
      return names ? (names[(n - offset) % names.length] ?? null) : String(n);
    };
    if (b === undefined) return name(a);
    const from = name(a);
    const to = name(b);
    return from && to ? `${from} to ${to}` : null;
  });
  if (parts.some((p) => p === null)) return null;
  return parts.length > 1 ? parts.slice(0, -1).join(', ') + ' and ' + parts[parts.length - 1] : parts[0];
}

/** The schedule in words, or '' when it is not one of the common shapes. */
export function describeCron(expr: string): string {
  const e = expr.trim();
  if (DESCRIPTORS[e.toLowerCase()]) return DESCRIPTORS[e.toLowerCase()];
  const every = /^@every\s+(.+)$/i.exec(e);
  if (every) return `every ${every[1].replace(/(\d+)h/, '$1 h ').replace(/(\d+)m(?!s)/, '$1 min ').replace(/(\d+)s/, '$1 s').trim()}`;
  const f = e.split(/\s+/);
  if (f.length !== 5) return '';
  const [min, hour, dom, mon, dow] = f;

  let time: string;
  const stepMin = /^\*\/(\d+)$/.exec(min);
  const stepHour = /^\*\/(\d+)$/.exec(hour);
  if (min === '*' && hour === '*') time = 'every minute';
  else if (stepMin && hour === '*') time = `every ${stepMin[1]} minutes`;
  else if (!Number.isNaN(num(min)) && hour === '*') time = num(min) === 0 ? 'every hour, on the hour' : `every hour at minute ${num(min)}`;
  else if (!Number.isNaN(num(min)) && stepHour) time = `every ${stepHour[1]} hours at minute ${num(min)}`;
  else if (!Number.isNaN(num(min)) && /^[\d,]+$/.test(hour)) time = 'at ' + hour.split(',').map((h) => `${two(num(h))}:${two(num(min))}`).join(' and ');
  else if (!Number.isNaN(num(min)) && /^\d+-\d+$/.test(hour)) {
    const [a, b] = hour.split('-').map(num);
    time = `every hour from ${two(a)}:${two(num(min))} to ${two(b)}:${two(num(min))}`;
  } else return '';

  const when: string[] = [];
  if (dow !== '*') {
    const days = list(dow, DAYS);
    if (!days) return '';
    when.push(days === 'Monday to Friday' ? 'on weekdays' : `on ${days}`);
  }
  if (dom !== '*') {
    const d = list(dom);
    if (!d) return '';
    when.push(`on day ${d} of the month`);
  }
  if (mon !== '*') {
    const m = list(mon, MONTHS, 1);
    if (!m) return '';
    when.push(`in ${m}`);
  }
  return [time, ...when].join(', ');
}

/** A time in the job's own time zone, naming the zone: "Mon 3 Mar, 09:00 (Europe/Berlin)". */
export function inZone(at: string | null | undefined, timeZone: string): string {
  if (!at) return '';
  try {
    const s = new Date(at).toLocaleString(undefined, { timeZone, weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    return `${s} (${timeZone})`;
  } catch {
    return new Date(at).toISOString(); // an unknown zone: UTC, plainly
  }
}
