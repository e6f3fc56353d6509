import { describe, it, expect, afterEach, vi } from 'vitest';
import { cleanup, render, screen, fireEvent } from '@testing-library/svelte';
import TaskDetail from '../components/TaskDetail.svelte';
import { app } from './state.svelte';
import { fakeFetch, task } from './test-helpers';
import type { Task } from './types';

function seed(scopes = ['task:read', 'task:write']) {
  app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes } };
  const t: Task = task({
    id: 7,
    summary: 'Print the report',
    status: 'Failed',
    agent_id: 4,
    agent_name: 'worker',
    conversation: [
      { role: 'assistant', content: 'Which format?', created_at: '2026-01-01T00:00:00Z', author: 'worker' },
      { role: 'assistant', content: 'The agent failed: the printer is offline', created_at: '2026-01-01T00:01:00Z', author: 'worker' },
    ],
  });
  app.tasks = new Map([[7, t]]);
  app.agents = [];
  app.tasksLoaded = true;
  return t;
}

describe('comments on a task', () => {
  afterEach(cleanup);

  it('adds a comment to a failed task and shows it in the thread', async () => {
    const t = seed();
    const calls = fakeFetch((c) =>
      c.method === 'POST'
        ? { ...t, conversation: [...t.conversation!, { role: 'user', content: c.body.content, created_at: '2026-01-01T00:02:00Z', author: 'ui' }] }
        : t,
    );
    render(TaskDetail, { id: 7, onclose: () => {} });
    // The agent's question and its failure reason are entries of the thread, by the agent.
    await screen.findByText('The agent failed: the printer is offline');
    expect(screen.getAllByTestId('convo-who').map((e) => e.textContent?.split(' ')[0])).toEqual(['worker', 'worker']);
    const box = screen.getByTestId('comment') as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: '  Plug it in, then **Retry**  ' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Comment' }));
    await screen.findByText('Retry', { selector: 'strong' });
    expect(calls.filter((c) => c.method === 'POST')).toMatchObject([{ url: '/api/tasks/7/comments', body: { content: 'Plug it in, then **Retry**' } }]);
    await vi.waitFor(() => expect(box.value).toBe(''));
    expect(app.tasks.get(7)!.status).toBe('Failed'); // a comment changes nothing else
  });

  it('keeps the draft and says why when the comment is refused', async () => {
    const t = seed();
    fakeFetch((c) =>
      c.method === 'POST'
        ? new Response(JSON.stringify({ error: { code: 'not_found', message: 'task 7 does not exist' } }), { status: 404 })
        : t,
    );
    render(TaskDetail, { id: 7, onclose: () => {} });
    const box = (await screen.findByTestId('comment')) as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: 'hello' } });
    await fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    expect((await screen.findByTestId('comment-error')).textContent).toContain('task 7 does not exist');
    expect(box.value).toBe('hello');
  });

  it('offers no comment box to a read-only viewer', async () => {
    const t = seed(['task:read']);
    fakeFetch(() => t);
    render(TaskDetail, { id: 7, onclose: () => {} });
    await screen.findByText('Print the report');
    expect(screen.queryByTestId('comment')).toBeNull();
  });
});
