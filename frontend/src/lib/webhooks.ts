// The webhook form and how a webhook and its deliveries read: checked in the browser for
// what is plainly wrong (the server checks again and says what is wrong).
import type { Webhook, WebhookDelivery } from './types';

export interface WebhookForm {
  url: string;
  /** Event types or families, separated by commas or spaces; empty: all events. */
  events: string;
  description: string;
}

export function emptyWebhookForm(): WebhookForm {
  return { url: '', events: '', description: '' };
}

const EVENT = /^[a-z][a-z_]*(\.[a-z][a-z_]*)*(\.\*)?$/;

/** The event types of the form, without repeats, in the order given. */
export function parseEvents(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

/** Problems to fix before sending, by field; empty when the form may be sent. */
export function validateWebhook(f: WebhookForm): Partial<Record<keyof WebhookForm, string>> {
  const e: Partial<Record<keyof WebhookForm, string>> = {};
  const raw = f.url.trim();
  let u: URL | null = null;
  try {
    u = raw ? new URL(raw) : null;
  } catch {
    u = null;
  }
  if (!raw) e.url = 'Give the URL to send the events to.';
  else if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) e.url = 'Give an http:// or https:// URL, e.g. https://example.com/hooks/agentdesk.';
  else if (u.username || u.password) e.url = 'Leave the user name and password out of the URL: deliveries are signed with the secret instead.';
  const bad = parseEvents(f.events).filter((t) => !EVENT.test(t));
  if (bad.length) e.events = `Not an event type: ${bad.join(', ')}. Use types such as task.created, or families such as task.*.`;
  if (f.description.length > 500) e.description = 'The description is at most 500 characters.';
  return e;
}

/** How the webhook is doing, in a word and a sentence. */
export function webhookState(w: Webhook): { tone: 'ok' | 'warn' | 'bad' | 'off'; label: string; detail: string } {
  if (!w.enabled) {
    return w.disabledReason
      ? { tone: 'bad', label: 'disabled', detail: w.disabledReason }
      : { tone: 'off', label: 'paused', detail: 'Disabled by hand: events wait until it is enabled again.' };
  }
  if (w.attempts > 0) {
    const next = w.nextAttemptAt ? ` Next attempt ${new Date(w.nextAttemptAt).toLocaleString()}.` : '';
    return { tone: 'warn', label: 'retrying', detail: `The next event failed ${w.attempts} time${w.attempts === 1 ? '' : 's'}.${next}` };
  }
  return { tone: 'ok', label: 'active', detail: 'Events are delivered as they happen.' };
}

/** A delivery's outcome in a few words: "204 in 12 ms", or why there was no answer. */
export function deliveryOutcome(d: WebhookDelivery): string {
  const took = `${d.durationMs} ms`;
  if (d.status == null) return `no answer after ${took}${d.error ? `: ${d.error}` : ''}`;
  return `${d.status} in ${took}`;
}

/** "attempt 2", or "redelivery" for one made by hand. */
export function attemptLabel(d: WebhookDelivery): string {
  return d.attempt === 0 ? 'redelivery' : `attempt ${d.attempt}`;
}
