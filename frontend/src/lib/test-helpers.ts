// A fetch double for component tests: records each call and answers from a table of
// handlers. The end-to-end tests (e2e/run.mjs) run the same screens against a real server.
import { vi } from 'vitest';
import type { Task } from './types';

export interface Call {
  method: string;
  url: string;
  body: any;
  /** The request's headers (lower-case names). */
  headers: Record<string, string>;
}

export function fakeFetch(handler: (c: Call) => unknown) {
  const calls: Call[] = [];
  const fn = vi.fn(async (url: string, init?: RequestInit) => {
    const c: Call = {
      method: init?.method ?? 'GET',
      url: String(url),
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : init?.body,
      headers: Object.fromEntries([...new Headers(init?.headers).entries()].map(([k, v]) => [k.toLowerCase(), v])),
    };
    calls.push(c);
    const out = await handler(c);
    if (out instanceof Response) return out;
    return new Response(JSON.stringify(out ?? {}), { status: 200, headers: { 'Content-Type': 'application/json' } });
  });
  vi.stubGlobal('fetch', fn);
  return calls;
}

export function task(over: Partial<Task>): Task {
  return {
    id: 1,
    project_id: 'p',
    agent_id: null,
    conversation_id: null,
    agent_name: '',
    summary: 'A task',
    details: '',
    steps: [],
    status: 'Backlog',
    source: 'user',
    taskType: 'standard',
    current_step_num: 0,
    is_active: false,
    is_waiting: false,
    waiting_details: null,
    waiting_version: 0,
    waiting_options: null,
    waiting_schema: null,
    waiting_expires_at: null,
    waiting_on_expiry: null,
    waiting_default: null,
    waiting_ask: null,
    created_at: '2026-01-01T00:00:00.000000Z',
    updated_at: '2026-01-01T00:00:00.000000Z',
    ...over,
  };
}
