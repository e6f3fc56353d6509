import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { cleanup, render, fireEvent } from '@testing-library/svelte';
import Board from '../screens/Board.svelte';
import { app, matchesSearch } from './state.svelte';
import { fakeFetch, task, type Call } from './test-helpers';
import { STATUSES, type Status } from './types';

// The board at scale: counts from one request, each column's pages on demand, Done
// newest first, counts kept live by events. A fake server holds `n` tasks per status.
function fakeServer(perStatus: Partial<Record<Status, number>>) {
  const all = new Map<Status, number[]>();
  let id = 0;
  for (const s of STATUSES) {
    const ids: number[] = [];
    for (let i = 0; i < (perStatus[s] ?? 0); i++) ids.push(++id);
    all.set(s, ids);
  }
  return (c: Call) => {
    const u = new URL(c.url, 'http://x');
    if (u.pathname === '/api/tasks/counts') {
      const out: Record<string, number> = { total: 0 };
      for (const s of STATUSES) (out[s] = all.get(s)!.length), (out.total += out[s]);
      return out;
    }
    if (u.pathname === '/api/tasks') {
      const status = u.searchParams.get('status') as Status;
      const limit = Number(u.searchParams.get('limit'));
      const after = Number(u.searchParams.get('after_id') ?? 0);
      const desc = u.searchParams.get('order') === 'desc';
      let ids = [...all.get(status)!];
      if (desc) ids.reverse();
      ids = ids.filter((i) => !after || (desc ? i < after : i > after)).slice(0, limit);
      return ids.map((i) => task({ id: i, status, summary: `task ${i}` }));
    }
    throw new Error('unexpected call ' + c.method + ' ' + c.url);
  };
}

describe('board paging', () => {
  beforeEach(() => {
    app.reset();
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write'] } };
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('loads the counts and one page per column, never the whole list', async () => {
    const calls = fakeFetch(fakeServer({ Backlog: 3, Done: 120, Failed: 50 }));
    await app.loadBoard();
    const urls = calls.map((c) => c.url);
    expect(urls).toContain('/api/tasks/counts');
    const lists = urls.filter((u) => u.startsWith('/api/tasks?'));
    expect(lists).toHaveLength(6);
    for (const u of lists) expect(u).toContain('limit=50');
    expect(lists.find((u) => u.includes('status=Done'))).toContain('order=desc');
    expect(lists.find((u) => u.includes('status=Backlog'))).not.toContain('order=desc');
    expect(app.counts).toMatchObject({ Backlog: 3, Done: 120, Failed: 50, Todo: 0 });
    expect(app.total).toBe(173);
    expect(app.tasks.size).toBe(3 + 50 + 50);
    // Done newest first: the last ids the fake made.
    expect(app.byStatus.Done[0].id).toBe(173 - 50);
    expect(app.byStatus.Done[1].id).toBe(173 - 51);
    expect(app.columns.Done.more).toBe(true);
    expect(app.columns.Failed.more).toBe(true); // a full page: one more request says it was the last
    expect(app.columns.Backlog.more).toBe(false);
  });

  it('keeps the task open in the pane when the board loads again, though no first page holds it (a link to it)', async () => {
    fakeFetch(fakeServer({ Backlog: 60 }));
    await app.loadBoard();
    expect(app.tasks.has(58)).toBe(false);
    app.tasks = new Map([...app.tasks, [58, task({ id: 58, status: 'Backlog', summary: 'task 58' })]]); // the pane loaded it
    app.openTaskId = 58;
    await app.loadBoard(); // the stream (re)opened
    expect(app.tasks.get(58)?.summary).toBe('task 58');
    app.openTaskId = null;
    await app.loadBoard();
    expect(app.tasks.has(58)).toBe(false);
  });

  it('pages a column on demand until it is complete, newest first for Done', async () => {
    const calls = fakeFetch(fakeServer({ Done: 120 }));
    await app.loadBoard();
    await app.loadMore('Done');
    expect(calls.at(-1)!.url).toContain('after_id=71'); // the last id of the first page (120..71)
    expect(app.byStatus.Done).toHaveLength(100);
    await app.loadMore('Done');
    expect(app.byStatus.Done).toHaveLength(120);
    expect(app.columns.Done.more).toBe(false);
    const n = calls.length;
    await app.loadMore('Done'); // complete: nothing more is asked
    expect(calls.length).toBe(n);
    const ids = app.byStatus.Done.map((t) => t.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it('keeps the counts live from events', async () => {
    const calls = fakeFetch(fakeServer({ Backlog: 2, Done: 60 }));
    await app.loadBoard();
    app.apply({ seq: 1, type: 'task.created', projectId: 'p', at: '', data: task({ id: 500, status: 'Todo', updated_at: '2026-02-01T00:00:00.000000Z' }) });
    expect(app.counts.Todo).toBe(1);
    app.apply({ seq: 2, type: 'task.updated', projectId: 'p', at: '', data: task({ id: 1, status: 'Done', updated_at: '2026-02-01T00:00:00.000000Z' }) });
    expect(app.counts).toMatchObject({ Backlog: 1, Done: 61 });
    expect(app.byStatus.Done[0].id).toBe(62); // newest first: the moved task (id 1) goes to its place
    expect(app.byStatus.Done.at(-1)!.id).toBe(1);
    app.apply({ seq: 3, type: 'task.deleted', projectId: 'p', at: '', data: { id: 2 } });
    expect(app.counts.Backlog).toBe(0);
    expect(app.total).toBe(62);

    // A change to a task that is not loaded (its old status is unknown): the counts are asked again.
    vi.useFakeTimers();
    const before = calls.length;
    app.apply({ seq: 4, type: 'task.updated', projectId: 'p', at: '', data: task({ id: 3, status: 'Failed', updated_at: '2026-02-01T00:00:00.000000Z' }) });
    app.apply({ seq: 5, type: 'task.deleted', projectId: 'p', at: '', data: { id: 4 } });
    await vi.advanceTimersByTimeAsync(300);
    expect(calls.slice(before).map((c) => c.url)).toEqual(['/api/tasks/counts']); // once for both
  });

  it('shows the counts in the column headers and a way to load more', async () => {
    fakeFetch(fakeServer({ Backlog: 2, Done: 60 }));
    await app.loadBoard();
    render(Board);
    expect(document.querySelector('[data-testid="task-total"]')!.textContent).toBe('62 tasks');
    const done = document.querySelector('[data-column="Done"]')!;
    expect(done.getAttribute('aria-label')).toBe('Done, 60 tasks');
    expect(done.querySelectorAll('[data-task-id]')).toHaveLength(50);
    expect(done.querySelector('[data-testid="load-more"]')!.textContent).toContain('10 more');
    expect(document.querySelector('[data-column="Backlog"] [data-testid="load-more"]')).toBeNull();
  });

  it('searches on the server: counts and every column for q, and events keep to the search', async () => {
    const calls = fakeFetch(fakeServer({ Backlog: 2, Done: 60 }));
    await app.loadBoard();
    render(Board);
    const before = calls.length;
    const box = document.querySelector<HTMLInputElement>('[data-testid="board-search"]')!;
    box.value = 'Déploy the';
    await fireEvent.input(box);
    // The board's own reads (the counts and each column), and beside them the search of
    // messages and documents (FoundElsewhere).
    const taskReads = () => calls.slice(before).filter((c) => c.url.startsWith('/api/tasks'));
    await vi.waitFor(() => expect(taskReads().length).toBe(7));
    const urls = taskReads().map((c) => c.url);
    expect(urls).toContain('/api/tasks/counts?q=D%C3%A9ploy%20the');
    await vi.waitFor(() => expect(calls.map((c) => c.url)).toContain('/api/search?q=D%C3%A9ploy%20the&limit=20'));
    for (const u of urls.filter((u) => u.startsWith('/api/tasks?'))) expect(u).toContain('q=D%C3%A9ploy+the');
    await vi.waitFor(() => expect(app.query).toBe('Déploy the'));
    // A new task that does not match stays off the board; one that matches joins it.
    app.apply({ seq: 1, type: 'task.created', projectId: 'p', at: '', data: task({ id: 900, summary: 'Write notes' }) });
    expect(app.tasks.has(900)).toBe(false);
    app.apply({ seq: 2, type: 'task.created', projectId: 'p', at: '', data: task({ id: 901, summary: 'Deployment of the cafe' }) });
    expect(app.tasks.has(901)).toBe(true);
    // Back to everything: no q.
    box.value = '  ';
    await fireEvent.input(box);
    await vi.waitFor(() => expect(app.query).toBe(''));
    expect(taskReads().at(-1)!.url).not.toContain('q=');
  });

  it('matches a search as the server does: every word, by prefix, case and accents ignored', () => {
    const t = task({ summary: 'Deploy the Café', details: 'after review' });
    expect(matchesSearch(t, 'dep cafe')).toBe(true);
    expect(matchesSearch(t, 'REVIEW')).toBe(true);
    expect(matchesSearch(t, 'deploy launch')).toBe(false);
    expect(matchesSearch(t, 'ploy')).toBe(false); // prefixes only
  });

  it("counts each agent's tasks on the server (the Agents screen), once for calls in a row", async () => {
    vi.useFakeTimers();
    const calls = fakeFetch((c) => {
      const m = /agent_id=(\d+)/.exec(c.url);
      return m ? { Backlog: 0, Todo: 1, Doing: 2, Waiting: 0, Done: 700, Failed: 0, total: 703 } : {};
    });
    app.agents = [{ id: 4, name: 'worker' }, { id: 9, name: 'other' }];
    app.loadAgentCounts();
    app.loadAgentCounts();
    await vi.advanceTimersByTimeAsync(150);
    expect(calls.map((c) => c.url)).toEqual(['/api/tasks/counts?agent_id=4', '/api/tasks/counts?agent_id=9']);
    expect(app.agentCounts.get(4)).toMatchObject({ Doing: 2, Done: 700 });
    expect(app.agentCounts.get(9)!.Todo).toBe(1);
  });
  it('keeps what events brought while the board loaded: a task made, another deleted, after their lists were read', async () => {
    const serve = fakeServer({ Backlog: 2 });
    let answer!: () => void;
    const held = new Promise<void>((r) => (answer = r));
    fakeFetch(async (c) => {
      const out = serve(c); // read now, answered later: older than the events below
      await held;
      return out;
    });
    const load = app.loadBoard();
    app.apply({ type: 'task.created', seq: 1, data: task({ id: 9, status: 'Backlog', summary: 'made meanwhile' }) } as any);
    app.apply({ type: 'task.deleted', seq: 2, data: { id: 1 } } as any);
    answer();
    await load;
    expect([...app.tasks.keys()].sort()).toEqual([2, 9]);
    // Events after the load are not held for the next one.
    app.apply({ type: 'task.deleted', seq: 3, data: { id: 9 } } as any);
    expect([...app.tasks.keys()]).toEqual([2]);
  });
});
