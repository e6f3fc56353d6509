import { describe, it, expect, afterEach } from 'vitest';
import { activityVariables, emptyFilter, rfc3339 } from './activity';
import { gql, rest } from './api';

describe('activity filter', () => {
  it('an empty filter asks for the first page only', () => {
    expect(activityVariables(emptyFilter())).toEqual({ first: 50 });
  });

  it('sends the fields given, trimmed, and before for the next page', () => {
    const v = activityVariables({ objectType: ' task ', objectId: '12', actor: 'ui', via: 'ui', since: '', until: '' }, 340);
    expect(v).toEqual({ first: 50, before: 340, objectType: 'task', objectId: '12', actor: 'ui', via: 'ui' });
  });

  it('turns the time range (local) into RFC 3339 UTC', () => {
    const since = '2026-03-01T08:30';
    const v = activityVariables({ ...emptyFilter(), since, until: '2026-03-02T00:00' });
    expect(v.since).toBe(new Date(since).toISOString().replace('.000Z', 'Z'));
    expect(String(v.since)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(String(v.until)) - Date.parse(String(v.since))).toBe(new Date('2026-03-02T00:00').getTime() - new Date(since).getTime());
    expect(rfc3339('not a time')).toBeUndefined();
    expect(rfc3339('')).toBeUndefined();
  });
});

describe('client header', () => {
  const real = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = real;
  });

  it('every REST and GraphQL request says it comes from the web UI', async () => {
    const seen: Record<string, string>[] = [];
    globalThis.fetch = (async (_u: string, init?: RequestInit) => {
      seen.push(init?.headers as Record<string, string>);
      return new Response('{"data":{}}', { status: 200, headers: { 'Content-Type': 'application/json' } });
    }) as typeof fetch;
    await rest('GET', '/api/tasks');
    await gql('{ viewer { kind } }');
    expect(seen).toHaveLength(2);
    for (const h of seen) expect(h['X-Agentdesk-Client']).toBe('web');
  });
});
