// The job form: what the user typed, checked in the browser for what is plainly wrong
// (the server checks the cron expression and the time zone and says what is wrong), and
// turned into the variables of createJob / updateJob.
import type { CatchUp, Job } from './types';

export interface JobForm {
  name: string;
  cron: string;
  timezone: string;
  summary: string;
  details: string;
  /** One step per line. */
  steps: string;
  /** Who gets each task: nobody, one agent, or an agent with a skill. */
  assign: 'none' | 'agent' | 'skill';
  agentId: string;
  skill: string;
  catchUp: CatchUp;
}

export function emptyJobForm(timezone = defaultTimezone()): JobForm {
  return { name: '', cron: '0 9 * * 1-5', timezone, summary: '', details: '', steps: '', assign: 'none', agentId: '', skill: '', catchUp: 'skip' };
}

export function defaultTimezone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

export function formOf(j: Job): JobForm {
  return {
    name: j.name,
    cron: j.cron,
    timezone: j.timezone,
    summary: j.summary,
    details: j.details,
    steps: j.steps.join('\n'),
    assign: j.agentId != null ? 'agent' : j.skill ? 'skill' : 'none',
    agentId: j.agentId != null ? String(j.agentId) : '',
    skill: j.skill ?? '',
    catchUp: j.catchUp,
  };
}

/** Problems to fix before sending, by field; empty when the form may be sent. */
export function validateJob(f: JobForm): Partial<Record<keyof JobForm, string>> {
  const e: Partial<Record<keyof JobForm, string>> = {};
  if (!f.name.trim()) e.name = 'Give the job a name.';
  else if (f.name.trim().length > 200) e.name = 'The name is at most 200 characters.';
  const cron = f.cron.trim();
  if (!cron) e.cron = 'Give a cron expression, e.g. 0 9 * * 1-5 or @daily.';
  else if (!cron.startsWith('@') && cron.split(/\s+/).length !== 5)
    e.cron = `A cron expression has five fields (minute hour day-of-month month day-of-week); this one has ${cron.split(/\s+/).length}.`;
  if (!f.summary.trim()) e.summary = 'Give the summary of the tasks the job makes.';
  if (f.assign === 'agent' && !f.agentId) e.agentId = 'Pick the agent.';
  if (f.assign === 'skill' && !f.skill.trim()) e.skill = 'Pick the skill.';
  return e;
}

function stepsOf(s: string): string[] {
  return s
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** Variables of createJob (no id) or updateJob (with id: every field sent, the assignment replaced). */
export function jobVariables(f: JobForm, id?: number): Record<string, unknown> {
  const v: Record<string, unknown> = {
    name: f.name.trim(),
    cron: f.cron.trim().replace(/\s+/g, ' '),
    timezone: f.timezone.trim() || 'UTC',
    summary: f.summary.trim(),
    details: f.details.trim(),
    steps: stepsOf(f.steps),
    catchUp: f.catchUp,
  };
  if (f.assign === 'agent') v.agentId = Number(f.agentId);
  else if (f.assign === 'skill') v.skill = f.skill.trim();
  if (id !== undefined) {
    v.id = id;
    if (f.assign === 'none') v.unassign = true;
  }
  return v;
}
