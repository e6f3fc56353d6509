import { describe, it, expect, beforeEach } from 'vitest';
import { render, fireEvent, screen, cleanup, waitFor } from '@testing-library/svelte';
import Webhooks from '../screens/Webhooks.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import { attemptLabel, deliveryOutcome, parseEvents, validateWebhook, webhookState } from './webhooks';
import type { Webhook, WebhookDelivery } from './types';

const SECRET = 'whsec_' + 'A'.repeat(32);

function hook(over: Partial<Webhook> = {}): Webhook {
  return {
    id: 1, url: 'http://127.0.0.1:9000/in', events: [], description: '', enabled: true, cursor: 3, attempts: 0,
    failingSince: null, nextAttemptAt: null, disabledReason: '', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', ...over,
  };
}

function delivery(over: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return { id: 7, webhookId: 1, seq: 4, eventType: 'webhook.test', attempt: 1, ok: true, status: 204, durationMs: 12, response: '', error: '', at: '2026-01-01T00:00:01Z', ...over };
}

describe('webhook form', () => {
  it('accepts http and https URLs, private ones too, and event types or families', () => {
    expect(validateWebhook({ url: 'http://127.0.0.1:9000/in', events: 'task.* message.created', description: '' })).toEqual({});
    expect(validateWebhook({ url: 'https://example.com/x', events: '', description: '' })).toEqual({});
  });
  it('refuses what the server would', () => {
    expect(validateWebhook({ url: '', events: '', description: '' }).url).toMatch(/Give the URL/);
    expect(validateWebhook({ url: 'ftp://example.com/x', events: '', description: '' }).url).toMatch(/http/);
    expect(validateWebhook({ url: 'example.com/x', events: '', description: '' }).url).toMatch(/http/);
    expect(validateWebhook({ url: 'https://u:p@example.com/x', events: '', description: '' }).url).toMatch(/password/);
    expect(validateWebhook({ url: 'https://example.com/x', events: 'task.created, Task Created', description: '' }).events).toMatch(/Task, Created/);
    expect(validateWebhook({ url: 'https://example.com/x', events: '', description: 'x'.repeat(501) }).description).toBeTruthy();
  });
  it('splits events on commas and spaces, without repeats', () => {
    expect(parseEvents(' task.*, message.created  task.* ')).toEqual(['task.*', 'message.created']);
    expect(parseEvents('')).toEqual([]);
  });
});

describe('webhook state and deliveries', () => {
  it('says whether a webhook is active, retrying, paused or disabled by failures', () => {
    expect(webhookState(hook()).label).toBe('active');
    expect(webhookState(hook({ attempts: 2, nextAttemptAt: '2026-01-01T00:05:00Z' }))).toMatchObject({ label: 'retrying', tone: 'warn' });
    expect(webhookState(hook({ enabled: false })).label).toBe('paused');
    expect(webhookState(hook({ enabled: false, disabledReason: 'every attempt failed for 3 days' }))).toMatchObject({ label: 'disabled', tone: 'bad' });
  });
  it('reads a delivery: status and duration, or why there was no answer', () => {
    expect(deliveryOutcome(delivery())).toBe('204 in 12 ms');
    expect(deliveryOutcome(delivery({ ok: false, status: null, durationMs: 10000, error: 'no answer within 10s' }))).toBe('no answer after 10000 ms: no answer within 10s');
    expect(attemptLabel(delivery({ attempt: 0 }))).toBe('redelivery');
    expect(attemptLabel(delivery({ attempt: 3 }))).toBe('attempt 3');
  });
});

describe('webhooks screen', () => {
  beforeEach(() => {
    cleanup();
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'admin'] } };
  });

  it('shows the secret once, lists webhooks without it, shows deliveries and redelivers', async () => {
    const list: Webhook[] = [];
    const calls = fakeFetch((c) => {
      const q: string = c.body.query;
      if (q.includes('createWebhook')) {
        const w = hook({ url: c.body.variables.u, events: c.body.variables.e });
        list.push(w);
        return { data: { w: { ...w, secret: SECRET } } };
      }
      if (q.includes('webhookDeliveries')) return { data: { webhookDeliveries: [delivery()] } };
      if (q.includes('redeliver')) return { data: { d: delivery({ id: 8, attempt: 0, status: 200 }) } };
      if (q.includes('webhooks')) return { data: { webhooks: list } };
      throw new Error('unexpected ' + q);
    });
    render(Webhooks);
    await screen.findByText('No webhooks yet.');
    await fireEvent.submit(screen.getByRole('button', { name: 'Create webhook' }).closest('form')!);
    expect(await screen.findByText(/Give the URL/)).toBeTruthy();
    expect(calls.some((c) => c.body?.query?.includes('createWebhook'))).toBe(false);

    await fireEvent.input(screen.getByLabelText('URL'), { target: { value: 'http://127.0.0.1:9000/in' } });
    await fireEvent.input(screen.getByLabelText('Events'), { target: { value: 'task.*, message.created' } });
    await fireEvent.submit(screen.getByRole('button', { name: 'Create webhook' }).closest('form')!);
    const secret = await screen.findByTestId<HTMLInputElement>('webhook-secret');
    expect(secret.value).toBe(SECRET);
    expect(calls.find((c) => c.body?.query?.includes('createWebhook'))!.body.variables.e).toEqual(['task.*', 'message.created']);
    await fireEvent.click(screen.getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByTestId('webhook-secret')).toBeNull();
    expect(document.body.textContent).not.toContain(SECRET);

    const row = await screen.findByTestId('webhook-row');
    expect(row.textContent).toContain('task.*');
    await fireEvent.click(screen.getByRole('button', { name: 'Deliveries' }));
    const outcome = await screen.findByTestId('delivery-outcome');
    expect(outcome.textContent).toBe('204 in 12 ms');
    await fireEvent.click(screen.getByRole('button', { name: 'Redeliver' }));
    await waitFor(() => expect(calls.some((c) => c.body?.query?.includes('redeliver') && c.body.variables.id === 7)).toBe(true));
  });
});
