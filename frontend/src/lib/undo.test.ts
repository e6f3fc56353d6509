import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { app } from './state.svelte';
import { toasts, dismiss, act } from './toast.svelte';
import { deleteWithUndo, offerMoveUndo, flushDeletes, UNDO_MS } from './undo.svelte';
import { fakeFetch, task, type Call } from './test-helpers';

describe('undo', () => {
  let calls: Call[];
  beforeEach(() => {
    vi.useFakeTimers();
    for (const t of [...toasts]) dismiss(t.id);
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write'] } };
    app.tasks = new Map([[5, task({ id: 5, summary: 'Old notes', status: 'Done' })]]);
    calls = fakeFetch((c) => (c.method === 'DELETE' ? new Response(null, { status: 204 }) : { ...app.tasks.get(5)!, status: c.body.status }));
  });
  afterEach(() => vi.useRealTimers());

  it('deletes after the undo window, not before', async () => {
    deleteWithUndo(app.tasks.get(5)!);
    expect(app.tasks.has(5)).toBe(false);
    expect(toasts[0]).toMatchObject({ text: 'Deleted #5 "Old notes".', action: { label: 'Undo' } });
    await vi.advanceTimersByTimeAsync(UNDO_MS - 100);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toMatchObject([{ method: 'DELETE', url: '/api/tasks/5' }]);
  });

  it('Undo puts the task back and sends nothing', async () => {
    app.counts = { ...app.counts, Done: 3 };
    const done = app.counts.Done;
    deleteWithUndo(app.tasks.get(5)!);
    expect(app.counts.Done).toBe(done - 1);
    act(toasts[0]);
    expect(app.tasks.get(5)?.summary).toBe('Old notes');
    expect(app.counts.Done).toBe(done); // counted again, without asking the server
    await vi.advanceTimersByTimeAsync(UNDO_MS * 2);
    expect(calls).toHaveLength(0);
    expect(toasts).toHaveLength(0);
  });

  it('sends held deletes at once when the page goes', async () => {
    deleteWithUndo(app.tasks.get(5)!);
    flushDeletes();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toMatchObject([{ method: 'DELETE', url: '/api/tasks/5' }]);
    await vi.advanceTimersByTimeAsync(UNDO_MS);
    expect(calls).toHaveLength(1);
  });

  it('moves back on Undo, without offering an undo of the undo', async () => {
    app.onMoved = offerMoveUndo;
    await app.move(5, 'Todo');
    expect(toasts.map((t) => t.text)).toEqual(['Moved #5 to Todo.']);
    act(toasts[0]);
    await vi.waitFor(() => expect(calls.map((c) => c.body?.status)).toEqual(['Todo', 'Done']));
    await vi.advanceTimersByTimeAsync(0);
    expect(app.tasks.get(5)!.status).toBe('Done');
    expect(toasts).toHaveLength(0);
    app.onMoved = undefined;
  });
});
