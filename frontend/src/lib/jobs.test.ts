import { describe, it, expect, afterEach, beforeEach } from 'vitest';
import { cleanup, render, fireEvent, screen } from '@testing-library/svelte';
import { emptyJobForm, formOf, jobVariables, validateJob } from './jobs';
import Jobs from '../screens/Jobs.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import { toasts } from './toast.svelte';

const base = () => ({ ...emptyJobForm('Europe/Berlin'), name: 'standup', cron: '*/5 * * * *', summary: 'Daily notes' });

describe('job form', () => {
  it('says what is missing or plainly wrong', () => {
    expect(validateJob(base())).toEqual({});
    const e = validateJob({ ...emptyJobForm('UTC'), cron: '0 9 * *', assign: 'agent' });
    expect(Object.keys(e).sort()).toEqual(['agentId', 'cron', 'name', 'summary']);
    expect(e.cron).toContain('has 4');
    expect(validateJob({ ...base(), cron: '@every 2h' })).toEqual({});
    expect(validateJob({ ...base(), cron: '  ' }).cron).toContain('Give a cron expression');
    expect(validateJob({ ...base(), assign: 'skill' }).skill).toBe('Pick the skill.');
    expect(validateJob({ ...base(), name: 'x'.repeat(201) }).name).toContain('200');
  });

  it('serialises a new job: steps one per line, the assignment, trimmed', () => {
    expect(jobVariables({ ...base(), cron: ' 0  9 * * 1-5 ', details: ' d ', steps: 'Collect\n\n  Draft \n', assign: 'agent', agentId: '3', skill: 'python', catchUp: 'run_once' })).toEqual({
      name: 'standup',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      summary: 'Daily notes',
      details: 'd',
      steps: ['Collect', 'Draft'],
      agentId: 3,
      catchUp: 'run_once',
    });
    const bySkill = jobVariables({ ...base(), assign: 'skill', skill: 'python', agentId: '3' });
    expect(bySkill.skill).toBe('python');
    expect(bySkill).not.toHaveProperty('agentId');
    expect(jobVariables({ ...base(), timezone: '' }).timezone).toBe('UTC');
  });

  it('an edit sends the id, and unassign when the tasks go to nobody', () => {
    const v = jobVariables(base(), 7);
    expect(v).toMatchObject({ id: 7, unassign: true });
    expect(jobVariables({ ...base(), assign: 'agent', agentId: '2' }, 7)).not.toHaveProperty('unassign');
  });

  it('reads a job back into the form', () => {
    const f = formOf({ id: 1, name: 'n', cron: '@daily', timezone: 'UTC', summary: 's', details: '', steps: ['a', 'b'], agentId: null, skill: 'go', catchUp: 'skip', paused: false, lastRunAt: null, nextRunAt: null, createdAt: '', updatedAt: '' });
    expect(f).toMatchObject({ steps: 'a\nb', assign: 'skill', skill: 'go', agentId: '' });
  });
});

describe('jobs screen', () => {
  beforeEach(() => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'task:write', 'admin'] } };
    toasts.splice(0);
  });
  afterEach(cleanup);

  it('shows the empty state, checks the form, and shows the server message for a bad cron', async () => {
    const calls = fakeFetch((c) => {
      const q: string = c.body.query;
      if (q.includes('createJob')) return { errors: [{ message: 'cron "61 * * * *": minute 61 is out of range (0-59)', extensions: { code: 'invalid_argument' } }] };
      if (q.includes('jobs')) return { data: { jobs: [] } };
      throw new Error('unexpected ' + q);
    });
    render(Jobs);
    expect((await screen.findByTestId('jobs-empty')).textContent).toContain('No jobs yet');
    await fireEvent.click(screen.getByRole('button', { name: 'New job' }));
    await fireEvent.submit(screen.getByRole('button', { name: 'Create job' }).closest('form')!);
    expect(screen.getByText('Give the job a name.')).toBeTruthy();
    expect(calls.some((c) => c.body.query.includes('createJob'))).toBe(false);

    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'standup' } });
    await fireEvent.input(screen.getByLabelText('Cron expression'), { target: { value: '61 * * * *' } });
    await fireEvent.input(screen.getByLabelText('Task summary'), { target: { value: 'Notes' } });
    await fireEvent.submit(screen.getByRole('button', { name: 'Create job' }).closest('form')!);
    expect((await screen.findByTestId('job-error')).textContent).toContain('minute 61 is out of range');
    const create = calls.find((c) => c.body.query.includes('createJob'))!;
    expect(create.body.variables).toMatchObject({ name: 'standup', cron: '61 * * * *', summary: 'Notes', catchUp: 'skip' });
    // Shown beside the form, so not repeated as a toast.
    expect(toasts.some((t) => t.text.includes('minute 61'))).toBe(false);
  });
});
