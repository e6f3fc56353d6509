import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { api, dropSession, eventsURL, restoreSession, signIn, signOut, type Me } from './api';
import { fakeFetch } from './test-helpers';

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

const tokenSession: Me = {
  via: 'token-session',
  user: null,
  project: { id: 'prj_a', name: 'Personal' },
  scopes: ['task:read', 'task:write'],
  memberships: [],
  csrfToken: 'csrf-t',
};
const viewer = { data: { viewer: { kind: 'token', name: 'ui', scopes: ['task:read', 'task:write'], projectId: 'prj_a' } } };

describe('token sign-in', () => {
  beforeEach(() => {
    dropSession();
    sessionStorage.clear();
    localStorage.clear();
  });
  afterEach(() => vi.unstubAllGlobals());

  it('trades the token for a browser session and keeps no token: later requests go with the cookie and the CSRF token', async () => {
    const calls = fakeFetch((c) => {
      if (c.url === '/api/session') return new Response(null, { status: 204 });
      if (c.url === '/api/me') return tokenSession;
      if (c.url === '/graphql') return viewer;
      return [];
    });
    const s = await signIn('  adk_pasted  ');
    expect(s).toMatchObject({ token: '', cookie: true, projectName: 'Personal', viewer: { kind: 'token', name: 'ui', projectId: 'prj_a' } });
    expect(s.user).toBeUndefined();
    expect(calls[0]).toMatchObject({ method: 'POST', url: '/api/session' });
    expect(calls[0].headers.authorization).toBe('Bearer adk_pasted');
    expect(sessionStorage.getItem('agentdesk.token')).toBeNull();

    await api.tasks();
    for (const c of calls.slice(1)) {
      expect(c.headers.authorization).toBeUndefined();
      if (c.method === 'POST') expect(c.headers['x-csrf-token']).toBe('csrf-t');
    }
    expect(new URL(eventsURL(s, null)).searchParams.has('access_token')).toBe(false);
  });

  it('a new tab starts from the cookie', async () => {
    fakeFetch((c) => {
      if (c.url === '/api/signin') return { oidc: null, session: true };
      if (c.url === '/api/me') return tokenSession;
      return viewer;
    });
    expect(await restoreSession()).toMatchObject({ cookie: true, viewer: { kind: 'token', projectId: 'prj_a' } });
  });

  it('says why a token is refused, and keeps nothing', async () => {
    fakeFetch(() => json(401, { error: { code: 'unauthenticated', message: 'this token was revoked' } }));
    await expect(signIn('adk_revoked')).rejects.toThrow('this token was revoked');
    const calls = fakeFetch(() => []);
    await api.tasks();
    expect(calls[0].headers.authorization).toBeUndefined();
  });

  it('signs out with POST /logout', async () => {
    const calls = fakeFetch((c) => {
      if (c.url === '/api/session') return new Response(null, { status: 204 });
      if (c.url === '/api/me') return tokenSession;
      if (c.url === '/logout') return { redirect: '/' };
      return viewer;
    });
    const s = await signIn('adk_pasted');
    expect(await signOut(s)).toBe('/');
    const logout = calls.find((c) => c.url === '/logout')!;
    expect([logout.method, logout.headers['x-csrf-token']]).toEqual(['POST', 'csrf-t']);
  });
});
