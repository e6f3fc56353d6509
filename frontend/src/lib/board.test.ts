import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { toasts } from './toast.svelte';
import { cleanup, render, fireEvent, screen } from '@testing-library/svelte';
import { tick } from 'svelte';
import Board from '../screens/Board.svelte';
import { app, loadOrder } from './state.svelte';
import { fakeFetch, task, type Call } from './test-helpers';

function seed() {
  app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write'] } };
  app.tasks = new Map([
    [1, task({ id: 1, summary: 'Write notes', status: 'Backlog', steps: [{ id: 1000, title: 'a', status: 'completed' }, { id: 1001, title: 'b', status: 'pending' }, { id: 1002, title: 'c', status: 'pending' }] })],
    [2, task({ id: 2, summary: 'Ask', status: 'Waiting', agent_id: 4, agent_name: 'worker', waiting_details: 'Which day?' })],
  ]);
  app.tasksLoaded = true;
}

function serverMoves(calls: Call[]) {
  return (c: Call) => {
    const m = /\/api\/tasks\/(\d+)\/status$/.exec(c.url);
    if (m && c.method === 'PUT') {
      const t = app.tasks.get(Number(m[1]))!;
      return { ...t, status: c.body.status, updated_at: '2026-01-02T00:00:00.000000Z' };
    }
    throw new Error('unexpected call ' + c.method + ' ' + c.url + ' after ' + calls.length);
  };
}

describe('board', () => {
  afterEach(cleanup);
  beforeEach(seed);

  it('shows each card in its column with its agent, step progress and a waiting badge', () => {
    render(Board);
    const backlog = document.querySelector('[data-column="Backlog"]')!;
    expect(backlog.textContent).toContain('Write notes');
    expect(backlog.textContent).toContain('1/3');
    const waiting = document.querySelector('[data-column="Waiting"]')!;
    expect(waiting.textContent).toContain('worker');
    expect(waiting.textContent).toContain('Which day?');
    expect(screen.getAllByText('Waiting').length).toBeGreaterThan(1); // the column and the badge
  });

  it('moves a card with the keyboard: Shift+ArrowRight, then a digit', async () => {
    const calls: Call[] = [];
    calls.push(...[]);
    const recorded = fakeFetch((c) => serverMoves(calls)(c));
    render(Board);
    const card = document.querySelector<HTMLElement>('[data-task-id="1"]')!;
    card.focus();
    await fireEvent.keyDown(card, { key: 'ArrowRight', shiftKey: true });
    await tick();
    // Until the server's answer (its updated_at) is applied.
    await vi.waitFor(() => expect(app.tasks.get(1)!.updated_at).toBe('2026-01-02T00:00:00.000000Z'));
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ method: 'PUT', url: '/api/tasks/1/status', body: { status: 'Todo' } });
    expect(app.tasks.get(1)!.status).toBe('Todo');
    expect(document.querySelector('[data-column="Todo"] [data-task-id="1"]')).not.toBeNull();

    const moved = document.querySelector<HTMLElement>('[data-task-id="1"]')!;
    await fireEvent.keyDown(moved, { key: '5' });
    await vi.waitFor(() => {
      expect(recorded).toHaveLength(2);
      expect(app.tasks.get(1)!.status).toBe('Done');
    });
    expect(recorded[1]).toMatchObject({ method: 'PUT', url: '/api/tasks/1/status', body: { status: 'Done' } });
    expect(document.querySelector('[data-column="Done"] [data-task-id="1"]')).not.toBeNull();
  });

  it('sends two quick moves of one card one after another, so the last one wins', async () => {
    const pending: { status: string; answer: () => void }[] = [];
    fakeFetch((c) => {
      const t = app.tasks.get(1)!;
      // The server answers only when the test says so: the first request is still
      // unanswered when the second move is made.
      return new Promise((resolve) =>
        pending.push({ status: c.body.status, answer: () => resolve({ ...t, status: c.body.status, updated_at: '2026-01-02T00:00:0' + pending.length + '.000000Z' }) }),
      );
    });
    const first = app.move(1, 'Todo');
    const second = app.move(1, 'Doing');
    await vi.waitFor(() => expect(pending).toHaveLength(1));
    await tick();
    expect(pending).toHaveLength(1); // the second waits for the first's answer
    pending[0].answer();
    await vi.waitFor(() => expect(pending).toHaveLength(2));
    expect(pending.map((p) => p.status)).toEqual(['Todo', 'Doing']);
    pending[1].answer();
    await Promise.all([first, second]);
    expect(app.tasks.get(1)!.status).toBe('Doing');
  });

  it('moves a card by dragging it onto another column', async () => {
    const recorded = fakeFetch((c) => serverMoves([])(c));
    render(Board);
    const card = document.querySelector<HTMLElement>('[data-task-id="1"]')!;
    await fireEvent.dragStart(card);
    const doing = document.querySelector<HTMLElement>('[data-column="Doing"]')!;
    await fireEvent.dragOver(doing);
    await fireEvent.drop(doing);
    await vi.waitFor(() => expect(app.tasks.get(1)!.updated_at).toBe('2026-01-02T00:00:00.000000Z'));
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ method: 'PUT', url: '/api/tasks/1/status', body: { status: 'Doing' } });
    expect(document.querySelector('[data-column="Doing"] [data-task-id="1"]')).not.toBeNull();
  });

  it('puts a refused move back and says why', async () => {
    fakeFetch(() => new Response(JSON.stringify({ error: { code: 'forbidden', message: 'this request needs the task:write scope' } }), { status: 403 }));
    render(Board);
    const card = document.querySelector<HTMLElement>('[data-task-id="1"]')!;
    await fireEvent.keyDown(card, { key: 'ArrowRight', shiftKey: true });
    // Until the refusal is shown and the card is back.
    await vi.waitFor(() => {
      expect(toasts.map((t) => t.text)).toContain('this request needs the task:write scope');
      expect(app.tasks.get(1)!.status).toBe('Backlog');
    });
  });

  it('applies task events from the stream', () => {
    render(Board);
    app.apply({ seq: 9, type: 'task.updated', projectId: 'p', at: '', data: { ...app.tasks.get(1)!, status: 'Failed', updated_at: '2026-01-03T00:00:00.000000Z' } });
    app.apply({ seq: 10, type: 'task.deleted', projectId: 'p', at: '', data: { id: 2 } });
    expect(app.byStatus.Failed.map((t) => t.id)).toEqual([1]);
    expect(app.tasks.has(2)).toBe(false);
  });
});

describe('the board in the first hour (issue 43)', () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    localStorage.clear();
    app.newestFirst = loadOrder(); // the defaults again
  });
  beforeEach(seed);

  it('makes each card a real link to its task, which a plain click follows in the page and a Ctrl+click leaves to the browser', async () => {
    render(Board);
    const card = document.querySelector<HTMLAnchorElement>('[data-task-id="1"]')!;
    expect(card.tagName).toBe('A');
    expect(card.getAttribute('href')).toBe('/tasks/1');
    const ctrl = new MouseEvent('click', { bubbles: true, cancelable: true, ctrlKey: true });
    card.dispatchEvent(ctrl);
    expect(ctrl.defaultPrevented).toBe(false); // the browser opens a new tab
    const plain = new MouseEvent('click', { bubbles: true, cancelable: true });
    card.dispatchEvent(plain);
    expect(plain.defaultPrevented).toBe(true);
    expect(location.pathname).toBe('/tasks/1');
  });

  it('sorts a column newest first on request, asks the server in that order, and remembers it', async () => {
    app.tasks = new Map([
      [1, task({ id: 1, summary: 'old', status: 'Todo' })],
      [5, task({ id: 5, summary: 'new', status: 'Todo' })],
    ]);
    const calls = fakeFetch((c) => (c.url.startsWith('/api/tasks/counts') ? { Todo: 2 } : c.url.includes('status=Todo') ? [app.tasks.get(5), app.tasks.get(1)] : []));
    render(Board);
    const ids = () => [...document.querySelectorAll<HTMLElement>('[data-column="Todo"] [data-task-id]')].map((e) => e.dataset.taskId);
    expect(ids()).toEqual(['1', '5']);
    const button = document.querySelector<HTMLButtonElement>('[data-column="Todo"] [data-testid="column-order"]')!;
    expect(button.textContent).toContain('Oldest');
    await fireEvent.click(button);
    await vi.waitFor(() => expect(ids()).toEqual(['5', '1']));
    expect(calls.find((c) => c.url.includes('status=Todo'))!.url).toContain('order=desc');
    expect(JSON.parse(localStorage.getItem('agentdesk.board.newestFirst')!).Todo).toBe(true);
    expect(loadOrder().Todo).toBe(true); // what a new page starts with
    expect(loadOrder().Backlog).toBe(false);
    expect(loadOrder().Done).toBe(true);
  });

  it('creates a task without cutting its summary, says the count as it is typed, and links the toast to the task', async () => {
    const long = 'x'.repeat(812);
    const calls = fakeFetch((c) => (c.method === 'POST' ? task({ id: 77, summary: c.body.summary, status: 'Backlog' }) : []));
    render(Board);
    await fireEvent.click(screen.getByRole('button', { name: /New task/ }));
    const input = screen.getByLabelText<HTMLInputElement>('Summary');
    expect(input.maxLength).toBe(-1); // no silent cut at any length
    await fireEvent.input(input, { target: { value: long } });
    expect(screen.getByTestId('summary-count').textContent).toContain('812 / 1,000');
    await fireEvent.input(input, { target: { value: 'y'.repeat(1001) } });
    expect(screen.getByTestId('summary-count').textContent).toContain('1,001 / 1,000: too long');
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Create task' }).disabled).toBe(true);
    await fireEvent.input(input, { target: { value: long } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create task' }));
    await vi.waitFor(() => expect(app.tasks.get(77)).toBeDefined());
    expect(calls.find((c) => c.method === 'POST')!.body.summary).toHaveLength(812);
    expect(toasts.at(-1)).toMatchObject({ text: 'Created #77 in Backlog.', link: '/tasks/77' });
    expect(app.justCreated).toBe(77);
    await vi.waitFor(() => expect(document.querySelector('[data-task-id="77"]')!.classList.contains('highlighted')).toBe(true));
  });

  it('says that Clear done deletes for good', () => {
    app.counts = { Backlog: 1, Todo: 0, Doing: 0, Waiting: 1, Done: 3, Failed: 0 };
    render(Board);
    expect(screen.getByTestId('clear-done').textContent).toContain('for good');
  });
});
