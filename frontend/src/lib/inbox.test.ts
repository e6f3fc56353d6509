import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { toasts } from './toast.svelte';
import { cleanup, render, fireEvent } from '@testing-library/svelte';
import Inbox from '../screens/Inbox.svelte';
import { app } from './state.svelte';
import { fakeFetch, task } from './test-helpers';
import { drafts } from './drafts.svelte';

describe('inbox', () => {
  afterEach(cleanup);
  beforeEach(() => {
    for (const k of Object.keys(drafts)) delete drafts[Number(k)];
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

  it('lists the oldest question first', () => {
    app.tasks = new Map([
      [1, task({ id: 1, summary: 'Newer', status: 'Waiting', waiting_details: 'b?', updated_at: '2026-01-03T00:00:00.000000Z' })],
      [2, task({ id: 2, summary: 'Older', status: 'Waiting', waiting_details: 'a?', updated_at: '2026-01-02T00:00:00.000000Z' })],
    ]);
    render(Inbox);
    const items = [...document.querySelectorAll('[data-testid="inbox-item"]')].map((e) => e.getAttribute('data-task-id'));
    expect(items).toEqual(['2', '1']);
  });

  it('keeps the draft, and says so, when someone else answers while you type', async () => {
    render(Inbox);
    const box = document.querySelector<HTMLTextAreaElement>('[data-testid="reply"]')!;
    await fireEvent.input(box, { target: { value: 'Friday, I think' } });
    // Dana answers in another browser: the task event moves it on.
    app.put({ ...app.tasks.get(7)!, status: 'Doing', waiting_details: null, updated_at: '2026-01-02T00:00:00.000000Z' });
    await vi.waitFor(() => expect(document.querySelector('[data-testid="answered-elsewhere"]')).not.toBeNull());
    const note = document.querySelector('[data-testid="answered-elsewhere"]')!.textContent!;
    expect(note).toContain('answered elsewhere while you typed (it is Doing now)');
    expect(note).toContain('Friday, I think');
    // Asked again: the draft is back in the reply box.
    app.put({ ...app.tasks.get(7)!, status: 'Waiting', waiting_details: 'Which day, then?', waiting_version: 4, updated_at: '2026-01-03T00:00:00.000000Z' });
    await vi.waitFor(() => expect(document.querySelector<HTMLTextAreaElement>('[data-testid="reply"]')?.value).toBe('Friday, I think'));
    expect(document.querySelector('[data-testid="answered-elsewhere"]')).toBeNull();
  });
});
