// Task events carry the task without its conversation and, in `appended`, the entries
// the change added (the contract's "Events stay small"): the state joins them to the
// conversation it already shows.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { cleanup, render, screen } from '@testing-library/svelte';
import TaskDetail from '../components/TaskDetail.svelte';
import { app } from './state.svelte';
import { fakeFetch, task } from './test-helpers';
import type { StreamEvent, Task, TaskMessage } from './types';

const entry = (content: string, at: string): TaskMessage => ({ role: 'user', content, created_at: at, author: 'Dana' });
const T0 = '2026-01-01T00:00:00.000000Z';
const T1 = '2026-01-01T00:01:00.000000Z';
const T2 = '2026-01-01T00:02:00.000000Z';

/** A task.updated event as the server sends it: no conversation, the change's entries in appended. */
function updated(t: Task, updatedAt: string, appended: TaskMessage[], seq = 5): StreamEvent {
  const { conversation: _, ...fields } = t;
  return { seq, type: 'task.updated', projectId: 'p', at: updatedAt, data: { ...fields, updated_at: updatedAt, appended } };
}

function seed(conversation?: TaskMessage[]): Task {
  app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write'] } };
  const t = task({ id: 7, summary: 'Print the report', status: 'Doing', updated_at: T0, conversation });
  app.tasks = new Map([[7, t]]);
  app.agents = [];
  app.tasksLoaded = true;
  return t;
}

describe('task events', () => {
  beforeEach(() => app.clearData());
  afterEach(cleanup);

  it('adds the entries a change appended to the conversation shown', () => {
    const t = seed([entry('first', T0)]);
    app.apply(updated(t, T1, [entry('second', T1)]));
    app.apply(updated(t, T2, [], 6)); // a change that added nothing
    const now = app.tasks.get(7)!;
    expect(now.conversation!.map((m) => m.content)).toEqual(['first', 'second']);
    expect(now.updated_at).toBe(T2);
    expect('appended' in now).toBe(false);
  });

  it('adds them once when the answer to the request came before its event', async () => {
    const t = seed([entry('first', T0)]);
    fakeFetch(() => ({ ...t, updated_at: T1, conversation: [entry('first', T0), entry('mine', T1)] }));
    await app.comment(7, 'mine');
    app.apply(updated(t, T1, [entry('mine', T1)]));
    expect(app.tasks.get(7)!.conversation!.map((m) => m.content)).toEqual(['first', 'mine']);
  });

  it('leaves a task shown without its conversation without one', () => {
    const t = seed(undefined);
    app.apply(updated(t, T1, [entry('second', T1)]));
    expect(app.tasks.get(7)!.conversation).toBeUndefined();
    expect(app.tasks.get(7)!.updated_at).toBe(T1);
  });

  it('loads the task again when an event overtook the answer', async () => {
    const t = seed(undefined);
    let gets = 0;
    fakeFetch(() => {
      if (++gets === 1) {
        // The comment commits after this answer was read, and its event arrives first.
        app.apply(updated(t, T1, [entry('second', T1)]));
        return { ...t, conversation: [entry('first', T0)] };
      }
      return { ...t, updated_at: T1, conversation: [entry('first', T0), entry('second', T1)] };
    });
    await app.refreshTask(7);
    expect(gets).toBe(2);
    expect(app.tasks.get(7)!.conversation!.map((m) => m.content)).toEqual(['first', 'second']);
  });

  it("shows another person's comment in the open task's thread", async () => {
    const t = seed([entry('first', T0)]);
    fakeFetch(() => t);
    render(TaskDetail, { id: 7, onclose: () => {} });
    await screen.findByText('first');
    app.apply(updated(t, T1, [entry('from a colleague', T1)]));
    await screen.findByText('from a colleague');
    expect(screen.getByText('first')).toBeTruthy(); // the earlier entries stay
  });
});
