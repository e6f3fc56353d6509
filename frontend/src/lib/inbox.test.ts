import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { toasts } from './toast.svelte';
import { cleanup, render, fireEvent } from '@testing-library/svelte';
import Inbox from '../screens/Inbox.svelte';
import { app } from './state.svelte';
import { fakeFetch, task } from './test-helpers';

describe('inbox', () => {
  afterEach(cleanup);
  beforeEach(() => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write'] } };
    app.tasks = new Map([
      [7, task({ id: 7, summary: 'Plan the launch', status: 'Waiting', agent_id: 1, agent_name: 'worker', waiting_details: 'Which day works?', waiting_version: 3 })],
      [8, task({ id: 8, summary: 'Not waiting', status: 'Doing' })],
    ]);
    app.tasksLoaded = true;
  });

  it('lists the waiting tasks with their question', () => {
    render(Inbox);
    const items = document.querySelectorAll('[data-testid="inbox-item"]');
    expect(items).toHaveLength(1);
    expect(items[0].textContent).toContain('Which day works?');
  });

  it('answers with Ctrl+Enter, sending the waiting_version it answers', async () => {
    const calls = fakeFetch((c) => ({ ...app.tasks.get(7)!, status: 'Doing', waiting_details: null, updated_at: '2026-01-02T00:00:00.000000Z' }));
    render(Inbox);
    const box = document.querySelector<HTMLTextAreaElement>('[data-testid="reply"]')!;
    await fireEvent.input(box, { target: { value: 'Thursday' } });
    await fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    await vi.waitFor(() => expect(app.tasks.get(7)!.status).toBe('Doing'));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: 'POST', url: '/api/tasks/7/respond', body: { response: 'Thursday', waiting_version: 3 } });
    expect(app.tasks.get(7)!.status).toBe('Doing');
    expect(document.querySelector('[data-testid="inbox-empty"]')).not.toBeNull();
  });

  it('shows the server message of a stale answer', async () => {
    fakeFetch((c) =>
      c.method === 'POST'
        ? new Response(JSON.stringify({ error: { code: 'conflict', message: 'task 7 has moved past waiting_version 3' } }), { status: 409 })
        : app.tasks.get(7),
    );
    render(Inbox);
    const box = document.querySelector<HTMLTextAreaElement>('[data-testid="reply"]')!;
    await fireEvent.input(box, { target: { value: 'late' } });
    await fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    await vi.waitFor(() => expect(toasts.map((t) => t.text)).toContain('task 7 has moved past waiting_version 3'));
  });
});
