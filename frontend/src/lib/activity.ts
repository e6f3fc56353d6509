// The Activity screen's filter, turned into the variables of the activity query.
export interface ActivityFilter {
  objectType: string;
  objectId: string;
  actor: string;
  /** '' for every interface, or rest, graphql, ui, cli, job, email, internal. */
  via: string;
  /** datetime-local values (the browser's time zone), or ''. */
  since: string;
  until: string;
}

export const VIAS = ['rest', 'graphql', 'ui', 'cli', 'job', 'email', 'internal'] as const;
export const PAGE = 50;

export function emptyFilter(): ActivityFilter {
  return { objectType: '', objectId: '', actor: '', via: '', since: '', until: '' };
}

/** A datetime-local value (local time) as RFC 3339 UTC; undefined when empty or not a time. */
export function rfc3339(local: string): string | undefined {
  if (!local.trim()) return undefined;
  const t = new Date(local);
  if (isNaN(t.getTime())) return undefined;
  return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Variables of the activity query: empty fields left out, before for the next page. */
export function activityVariables(f: ActivityFilter, before?: number, first = PAGE): Record<string, unknown> {
  const v: Record<string, unknown> = { first };
  if (before !== undefined) v.before = before;
  for (const k of ['objectType', 'objectId', 'actor', 'via'] as const) {
    const s = f[k].trim();
    if (s) v[k] = s;
  }
  const since = rfc3339(f.since);
  const until = rfc3339(f.until);
  if (since) v.since = since;
  if (until) v.until = until;
  return v;
}
