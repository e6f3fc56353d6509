import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { cleanup, render, screen } from '@testing-library/svelte';
import TaskDetail from '../components/TaskDetail.svelte';
import TaskCard from '../components/TaskCard.svelte';
import CreateTask from '../components/CreateTask.svelte';
import { app } from './state.svelte';
import { fakeFetch, task } from './test-helpers';

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

function seed(lastSeenAt: string | null, status: 'Todo' | 'Done' = 'Todo') {
  app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write'] } };
  const t = task({ id: 7, summary: 'Index the docs', status, agent_id: 4, agent_name: 'worker' });
  app.tasks = new Map([[7, t]]);
  app.agents = [{ id: 4, name: 'worker', lastSeenAt }];
  app.tasksLoaded = true;
  fakeFetch(() => t); // the detail pane loads the whole task
}

describe('agent presence', () => {
  afterEach(cleanup);
  beforeEach(() => (app.agents = []));

  it('warns when the task waits for an agent not seen for an hour', async () => {
    seed(ago(3 * 3_600_000));
    render(TaskDetail, { id: 7, onclose: () => {} });
    const warn = await screen.findByTestId('agent-stale');
    expect(warn.textContent).toContain('worker is not running: last seen 3 h ago');
  });

  it('warns when the agent was never seen', async () => {
    seed(null);
    render(TaskDetail, { id: 7, onclose: () => {} });
    expect((await screen.findByTestId('agent-stale')).textContent).toContain('never been seen');
  });

  it('says online, without a warning, for an agent seen a minute ago', async () => {
    seed(ago(60_000));
    render(TaskDetail, { id: 7, onclose: () => {} });
    expect((await screen.findByTestId('agent-seen')).textContent).toContain('worker: online');
    expect(screen.queryByTestId('agent-stale')).toBeNull();
  });

  it('does not warn about a finished task', async () => {
    seed(null, 'Done');
    render(TaskDetail, { id: 7, onclose: () => {} });
    await screen.findByText('Index the docs');
    expect(screen.queryByTestId('agent-stale')).toBeNull();
  });

  it('marks the card with the agent online or stale', () => {
    seed(ago(30_000));
    const { unmount } = render(TaskCard, { task: app.tasks.get(7)!, onkey: () => {}, ondragstart: () => {} });
    let el = document.querySelector('.agent')!;
    expect(el.classList.contains('online')).toBe(true);
    expect(el.getAttribute('title')).toBe('worker: online');
    unmount();
    seed(ago(2 * 3_600_000));
    render(TaskCard, { task: app.tasks.get(7)!, onkey: () => {}, ondragstart: () => {} });
    el = document.querySelector('.agent')!;
    expect(el.classList.contains('stale')).toBe(true);
    expect(el.getAttribute('title')).toBe('worker: last seen 2 h ago');
  });

  it('says, when choosing an agent, which ones are not running', () => {
    seed(null);
    app.agents = [...app.agents, { id: 5, name: 'helper', lastSeenAt: ago(10_000) }];
    render(CreateTask, { onclose: () => {} });
    const labels = [...document.querySelectorAll<HTMLOptionElement>('#t-agent option')].map((o) => o.textContent);
    expect(labels).toEqual(['Unassigned (Backlog)', 'worker (never seen)', 'helper']);
  });
});
