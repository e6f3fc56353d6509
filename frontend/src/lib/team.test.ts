import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { cleanup, render, fireEvent, screen } from '@testing-library/svelte';
import { api, cookieSession, dropSession, eventsURL, gql, restoreSession, signInOptions, signOut, type Me, type Session } from './api';
import { describeAgent, grantableRoles, sortSessions, switchableProjects, whoLabel } from './team';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import { toasts } from './toast.svelte';
import Members from '../screens/Members.svelte';
import Settings from '../screens/Settings.svelte';

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function me(projectId: string, over: Partial<Me> = {}): Me {
  const names: Record<string, string> = { prj_a: 'Acme', prj_b: 'Side' };
  return {
    via: 'session',
    user: { id: 2, email: 'dana@acme.test', name: 'Dana Scott' },
    project: { id: projectId, name: names[projectId] },
    scopes: projectId === 'prj_a' ? ['admin', 'messaging:read', 'messaging:write', 'task:read', 'task:write'] : ['messaging:read', 'task:read'],
    memberships: [
      { projectId: 'prj_a', projectName: 'Acme', role: 'owner' },
      { projectId: 'prj_b', projectName: 'Side', role: 'viewer' },
    ],
    csrfToken: 'csrf-1',
    ...over,
  };
}

/** A server in team mode where Dana is signed in: /api/me answers for the project of the header. */
function teamServer(extra: (c: { method: string; url: string; headers: Record<string, string>; body: any }) => unknown = () => undefined) {
  return fakeFetch((c) => {
    if (c.url === '/api/signin') return { oidc: { name: 'Acme ID', loginUrl: '/login' }, session: true };
    if (c.url === '/api/me') {
      const p = c.headers['x-agentdesk-project'] || 'prj_a';
      if (p === 'prj_gone') return json(403, { error: { code: 'forbidden', message: 'you are not a member of project "prj_gone"' } });
      return me(p);
    }
    return extra(c) ?? {};
  });
}

describe('team mode session', () => {
  beforeEach(() => {
    dropSession();
    sessionStorage.clear();
    localStorage.clear();
  });
  afterEach(() => vi.unstubAllGlobals());

  it('starts from the cookie without a token and sends the project and CSRF token on every request', async () => {
    const calls = teamServer(() => ({ data: { agents: [] } }));
    const s = (await restoreSession())!;
    expect(s).toMatchObject({ token: '', cookie: true, projectName: 'Acme', viewer: { kind: 'user', name: 'Dana Scott', projectId: 'prj_a' } });
    expect(calls[1].headers.authorization).toBeUndefined();
    await api.tasks();
    await gql('{ agents { id } }');
    for (const c of calls.slice(2)) {
      expect(c.headers['x-agentdesk-project']).toBe('prj_a');
      expect(c.headers['x-csrf-token']).toBe('csrf-1');
      expect(c.headers.authorization).toBeUndefined();
    }
    // The stream: the cookie goes along by itself; the project rides in the query.
    const u = new URL(eventsURL(s, 41));
    expect([u.pathname, u.searchParams.get('project_id'), u.searchParams.get('since'), u.searchParams.has('access_token')]).toEqual([
      '/api/events',
      'prj_a',
      '41',
      false,
    ]);
  });

  it('keeps the chosen project for the tab, and falls back to the first one when it is no longer the person’s', async () => {
    const calls = teamServer();
    const side = (await cookieSession('prj_b'))!;
    expect(side.viewer.projectId).toBe('prj_b');
    expect(side.viewer.scopes).toEqual(['messaging:read', 'task:read']);
    expect(sessionStorage.getItem('agentdesk.project')).toBe('prj_b');
    expect((await restoreSession())!.viewer.projectId).toBe('prj_b');

    sessionStorage.setItem('agentdesk.project', 'prj_gone');
    const back = (await restoreSession())!;
    expect(back.viewer.projectId).toBe('prj_a');
    expect(calls.filter((c) => c.url === '/api/me').map((c) => c.headers['x-agentdesk-project'] ?? '')).toEqual(['prj_b', 'prj_b', 'prj_gone', '']);
  });

  it('stays in the last project when a switch cannot reach the server', async () => {
    teamServer();
    await cookieSession('prj_b');
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('fetch failed'))));
    await expect(cookieSession('prj_a')).rejects.toThrow('cannot be reached');
    const calls = teamServer();
    await api.tasks();
    expect(calls[0].headers['x-agentdesk-project']).toBe('prj_b');
  });

  it('shows the sign-in page when there is no session (401), and uses a kept token before the cookie', async () => {
    const calls = fakeFetch((c) =>
      c.url === '/api/signin' ? { oidc: null, session: true } : json(401, { error: { code: 'unauthenticated', message: 'authentication required' } }),
    );
    expect(await restoreSession()).toBeNull();
    expect(calls.map((c) => c.url)).toEqual(['/api/signin', '/api/me']);

    sessionStorage.setItem('agentdesk.token', 'adk_kept');
    const calls2 = fakeFetch(() => ({ data: { viewer: { kind: 'token', name: 'ui', scopes: ['task:read'], projectId: 'prj_a' } } }));
    const s = (await restoreSession())!;
    expect(s.cookie).toBeFalsy();
    expect(calls2[0].headers.authorization).toBe('Bearer adk_kept');
    expect(calls2[0].headers['x-csrf-token']).toBeUndefined();
    expect(new URL(eventsURL(s, null)).searchParams.get('access_token')).toBe('adk_kept');
  });

  it('asks /api/me only when a session cookie came (no 401 on a first visit), and the sign-in page reuses the answer', async () => {
    const calls = fakeFetch((c) => (c.url === '/api/signin' ? { oidc: { name: 'Acme ID', loginUrl: '/login' }, session: false } : me('prj_a')));
    expect(await restoreSession()).toBeNull();
    expect(await signInOptions()).toEqual({ oidc: { name: 'Acme ID', loginUrl: '/login' }, session: false });
    expect(calls.map((c) => c.url)).toEqual(['/api/signin']);
  });

  it('signs out with POST /logout and the CSRF token, then follows to where the server says', async () => {
    const calls = teamServer((c) => (c.url === '/logout' ? { redirect: 'http://id.acme.test/end_session?client_id=agentdesk' } : undefined));
    const s = await restoreSession();
    const to = await signOut(s);
    const logout = calls.find((c) => c.url === '/logout')!;
    expect(logout.method).toBe('POST');
    expect(logout.headers['x-csrf-token']).toBe('csrf-1');
    expect(logout.headers.accept).toContain('application/json');
    expect(to).toBe('http://id.acme.test/end_session?client_id=agentdesk');
    // Nothing of the session is sent afterwards.
    await api.tasks().catch(() => {});
    expect(calls.at(-1)!.headers['x-csrf-token']).toBeUndefined();
    expect(calls.at(-1)!.headers['x-agentdesk-project']).toBeUndefined();
  });
});

describe('team state logic', () => {
  const session = (over: Partial<Session>): Session => ({
    token: '',
    desktop: false,
    wsBase: 'ws://x',
    viewer: { kind: 'user', name: 'Dana Scott', projectId: 'prj_a', scopes: ['admin'] },
    ...over,
  });

  it('names the caller and offers the switcher only for several projects', () => {
    const m = me('prj_a');
    const s = session({ cookie: true, user: m.user!, memberships: m.memberships });
    expect(whoLabel(s)).toBe('Dana Scott');
    expect(whoLabel(session({ token: 't', viewer: { kind: 'token', name: 'ci', projectId: 'p', scopes: [] } }))).toBe('ci');
    expect(whoLabel(session({ desktop: true, viewer: { kind: 'token', name: 'desktop', projectId: 'p', scopes: [] } }))).toBe('Owner');
    expect(switchableProjects(s).map((p) => p.projectName)).toEqual(['Acme', 'Side']);
    expect(switchableProjects({ ...s, memberships: m.memberships.slice(0, 1) })).toEqual([]);
    expect(switchableProjects(session({ token: 't' }))).toEqual([]);
  });

  it('lets only owners hand out the owner role', () => {
    const m = me('prj_a');
    const owner = session({ cookie: true, memberships: m.memberships });
    expect(grantableRoles(owner)).toEqual(['owner', 'admin', 'member', 'viewer']);
    const admin = session({ cookie: true, memberships: [{ projectId: 'prj_a', projectName: 'Acme', role: 'admin' }] });
    expect(grantableRoles(admin)).toEqual(['admin', 'member', 'viewer']);
    expect(grantableRoles(session({ token: 't', viewer: { kind: 'token', name: 'ci', projectId: 'p', scopes: ['admin'] } }))).not.toContain('owner');
  });

  it('lists this browser first, then by last use, and names browsers', () => {
    const s = (id: number, lastSeenAt: string, current = false) => ({ id, createdAt: lastSeenAt, lastSeenAt, userAgent: '', address: '', current });
    expect(sortSessions([s(1, '2026-01-01T00:00:00Z'), s(2, '2026-01-03T00:00:00Z'), s(3, '2026-01-02T00:00:00Z', true)]).map((x) => x.id)).toEqual([3, 2, 1]);
    expect(describeAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36')).toBe('Chrome on Linux');
    expect(describeAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on macOS');
    expect(describeAgent('curl/8.5.0')).toBe('curl/8.5.0');
    expect(describeAgent('')).toBe('Unknown browser');
  });
});

describe('members and sessions screens', () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });
  beforeEach(() => {
    const m = me('prj_a');
    app.session = { token: '', desktop: false, wsBase: 'ws://x', cookie: true, user: m.user!, memberships: m.memberships, projectName: 'Acme', viewer: { kind: 'user', name: 'Dana Scott', projectId: 'prj_a', scopes: m.scopes } };
  });

  const member = (userId: number, name: string, role: string, email: string | null = null) => ({ userId, name, email, role, isLocalOwner: false, createdAt: '2026-01-01T00:00:00Z' });

  it('invites by email with a role and shows the server refusing a change', async () => {
    let list = [member(2, 'Dana Scott', 'owner', 'dana@acme.test')];
    const calls = fakeFetch((c) => {
      if (c.url === '/api/signin') return { oidc: null, session: true }; // no provider: nobody can sign in yet
      const q: string = c.body.query;
      if (q.includes('addMember')) {
        list = [...list, member(3, 'sam', c.body.variables.r, c.body.variables.e)];
        return { data: { m: list.at(-1) } };
      }
      if (q.includes('setMemberRole'))
        return { errors: [{ message: "Dana Scott is the project's last owner and cannot be demoted; make another member owner first", extensions: { code: 'conflict' } }] };
      if (q.includes('members')) return { data: { members: list } };
      throw new Error('unexpected ' + q);
    });
    vi.stubGlobal('confirm', () => true);
    render(Members);
    await screen.findByText('Dana Scott');
    await fireEvent.input(screen.getByLabelText('Email'), { target: { value: 'sam@acme.test' } });
    const role = screen.getByLabelText<HTMLSelectElement>('Role');
    role.value = 'viewer';
    await fireEvent.change(role);
    await fireEvent.submit(screen.getByRole('button', { name: 'Invite' }).closest('form')!);
    await screen.findByText('sam@acme.test');
    const add = calls.find((c) => c.body?.query.includes('addMember'))!;
    expect(add.body.variables).toEqual({ e: 'sam@acme.test', r: 'viewer' });
    // Without a sign-in provider the screen says that nobody can sign in with an email yet.
    expect(screen.getByTestId('no-provider').textContent).toContain('nobody can sign in');
    expect(toasts.map((t) => t.text)).toContain('sam@acme.test is a viewer now; nobody can sign in until the server has a sign-in provider (--oidc-issuer).');

    const select = screen.getByLabelText<HTMLSelectElement>('Role of Dana Scott');
    select.value = 'admin';
    await fireEvent.change(select);
    const problem = await screen.findByTestId('member-problem');
    expect(problem.textContent).toContain('last owner');
    await vi.waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>('Role of Dana Scott').value).toBe('owner')); // the role kept, not the one refused
  });

  it('lists the person’s sessions with this browser marked, and signs one out', async () => {
    let sessions = [
      { id: 7, createdAt: '2026-01-01T00:00:00Z', lastSeenAt: '2026-01-02T00:00:00Z', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36', address: '127.0.0.1', current: true },
      { id: 8, createdAt: '2026-01-01T00:00:00Z', lastSeenAt: '2026-01-03T00:00:00Z', userAgent: 'Mozilla/5.0 (Windows NT 10.0) Firefox/128.0', address: '203.0.113.7', current: false },
    ];
    const calls = fakeFetch((c) => {
      if (c.url === '/api/about') return { version: 'test' };
      if (c.url === '/api/me/sessions') return { sessions };
      if (c.method === 'DELETE' && c.url === '/api/me/sessions/8') {
        sessions = sessions.filter((s) => s.id !== 8);
        return new Response(null, { status: 204 });
      }
      throw new Error('unexpected ' + c.method + ' ' + c.url);
    });
    render(Settings);
    const rows = await screen.findAllByTestId('session-row');
    expect(rows.map((r) => r.textContent)).toEqual([expect.stringContaining('this browser'), expect.stringContaining('Firefox on Windows')]);
    expect(rows[1].textContent).not.toContain('this browser');
    await fireEvent.click(rows[1].querySelector('button')!);
    await vi.waitFor(() => expect(screen.getAllByTestId('session-row')).toHaveLength(1));
    expect(calls.find((c) => c.method === 'DELETE')!.url).toBe('/api/me/sessions/8');
  });

  it('shows the version, commit and build date, and links the third-party licenses', async () => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['admin'] } };
    fakeFetch(() => ({ version: '0.3.0', commit: '9a058fc1b2d3', buildDate: '2026-11-29T12:00:00Z' }));
    render(Settings);
    const version = await screen.findByTestId('version');
    expect(version.textContent).toBe('0.3.0 (commit 9a058fc1b2d3, built 2026-11-29T12:00:00Z)');
    expect(screen.getByRole('link', { name: 'Third-party licenses' }).getAttribute('href')).toBe('/licenses');
  });

  it('shows no sessions section to a token', async () => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['admin'] } };
    const calls = fakeFetch(() => ({ version: 'test', commit: 'c', buildDate: 'd' }));
    render(Settings);
    await screen.findByText('test', { exact: false });
    expect(screen.queryByTestId('your-sessions')).toBeNull();
    // An admin token reads the question emails (GraphQL mailSends); never its sessions.
    expect(calls.map((c) => c.url).sort()).toEqual(['/api/about', '/graphql']);
  });
});
