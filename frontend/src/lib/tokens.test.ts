import { describe, it, expect, beforeEach, vi } from 'vitest';
import { render, fireEvent, screen, cleanup } from '@testing-library/svelte';
import Tokens from '../screens/Tokens.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';

const VALUE = 'adk_' + 'x'.repeat(40);

describe('tokens', () => {
  beforeEach(() => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write', 'admin'] } };
  });

  it('shows a new token value once: after create, gone after dismissing and after a reload', async () => {
    const list: any[] = [];
    const calls = fakeFetch((c) => {
      const q: string = c.body.query;
      if (q.includes('createPlatformToken')) {
        const t = { id: 5, name: c.body.variables.n, type: 'platform', scopes: c.body.variables.s, hint: 'adk_xxxx', createdAt: '2026-01-01T00:00:00Z', lastUsedAt: null, revokedAt: null };
        list.push(t);
        return { data: { t: { ...t, token: VALUE } } };
      }
      if (q.includes('tokens')) return { data: { tokens: list } };
      throw new Error('unexpected ' + q);
    });
    render(Tokens);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'ci' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'task:write' }));
    await fireEvent.submit(screen.getByRole('button', { name: 'Create token' }).closest('form')!);
    const shown = await screen.findByTestId<HTMLInputElement>('token-value');
    const create = calls.find((c) => c.body.query.includes('createPlatformToken'))!;
    expect(create.body.variables).toMatchObject({ n: 'ci', s: ['task:read', 'task:write'] });
    // 90 days by default.
    expect(Math.round((Date.parse(create.body.variables.e) - Date.now()) / 86_400_000)).toBe(90);
    expect(shown.value).toBe(VALUE);
    expect(screen.getByTestId('token-reveal').textContent).toContain('only time it is shown');

    await fireEvent.click(screen.getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByTestId('token-value')).toBeNull();
    expect(document.body.innerHTML).not.toContain(VALUE);

    // A reload mounts the screen anew: the list comes back without any value.
    cleanup();
    render(Tokens);
    await vi.waitFor(() => expect(screen.getByTestId('token-list').textContent).toContain('ci'));
    expect(document.body.innerHTML).not.toContain(VALUE);
    expect(sessionStorage.length + localStorage.length).toBe(0);
  });

  it('lets an admin make a data token, with the expiry chosen or none', async () => {
    cleanup();
    const calls = fakeFetch((c) => {
      const q: string = c.body.query;
      if (q.includes('createDataToken')) {
        const t = { id: 6, name: c.body.variables.n, type: 'data', scopes: c.body.variables.s, hint: 'adk_yyyy', createdAt: '2026-01-01T00:00:00Z', lastUsedAt: null, revokedAt: null };
        return { data: { t: { ...t, token: VALUE } } };
      }
      if (q.includes('tokens')) return { data: { tokens: [] } };
      throw new Error('unexpected ' + q);
    });
    render(Tokens);
    await fireEvent.click(screen.getByRole('radio', { name: /Data/ }));
    const read = screen.getByRole<HTMLInputElement>('checkbox', { name: 'vector:read' });
    const write = screen.getByRole<HTMLInputElement>('checkbox', { name: 'vector:write' });
    expect(read.disabled || write.disabled).toBe(false); // admin covers the data scopes
    await fireEvent.click(write);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'kb-loader' } });
    const expires = screen.getByLabelText<HTMLSelectElement>('Expires');
    await fireEvent.change(expires, { target: { value: '0' } }); // never
    await fireEvent.submit(screen.getByRole('button', { name: 'Create token' }).closest('form')!);
    await screen.findByTestId('token-value');
    const create = calls.find((c) => c.body.query.includes('createDataToken'))!;
    expect(create.body.variables).toEqual({ n: 'kb-loader', s: ['vector:read', 'vector:write'], e: null });
  });

  it("shows who made each token, and no person for the command line's", async () => {
    cleanup();
    const base = { type: 'platform', scopes: ['admin'], hint: 'adk_zzzz', createdAt: '2026-01-01T00:00:00Z', lastUsedAt: null, revokedAt: null };
    const calls = fakeFetch((c) => {
      if (c.body.query.includes('tokens')) {
        return {
          data: {
            tokens: [
              { ...base, id: 1, name: 'ci', createdBy: { id: 7, name: 'Dana Test', email: 'dana@example.com' } },
              { ...base, id: 2, name: 'cli', createdBy: null },
            ],
          },
        };
      }
      throw new Error('unexpected ' + c.body.query);
    });
    render(Tokens);
    await vi.waitFor(() => expect(screen.getAllByTestId('token-maker')).toHaveLength(2));
    expect(calls[0].body.query).toContain('createdBy { id name email }');
    const [dana, cli] = screen.getAllByTestId('token-maker');
    expect(dana.textContent?.trim()).toBe('Dana Test');
    expect(dana.querySelector('[title]')?.getAttribute('title')).toBe('dana@example.com');
    expect(cli.textContent?.trim()).toBe('no person');
  });
});
