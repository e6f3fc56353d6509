// Notifications: a task entering Waiting, or a message that mentions the person (@name).
// In a browser they use the Notification API, whose permission is asked only from the
// Inbox's "Notify me" button (never on load or on any click). In the desktop window the
// webview grants that API nothing, so they go through the Desktop binding (Notify, sent
// on the session bus by the Go side), whose click comes back as the agentdesk:open event;
// a question with options goes through NotifyQuestion, whose buttons answer it there.
import type { Session } from './api';
import { waitingText, type Message } from './types';

export interface Note {
  title: string;
  body: string;
  /** The UI route a click opens. */
  path: string;
  /** Replaces an earlier notification of the same thing (browsers). */
  tag: string;
  /** A question with options: in the desktop window each option is a button of the notification that answers it. */
  question?: { projectId: string; taskId: number; version: number; options: string[] };
}

type WaitingTask = { id: number; summary: string; project_id?: string; waiting_version?: number; waiting_options?: string[] | null } & Parameters<typeof waitingText>[0];

export function waitingNote(t: WaitingTask): Note {
  const n: Note = { title: `Waiting: ${t.summary}`, body: waitingText(t) || 'An agent needs your answer.', path: `/tasks/${t.id}`, tag: `task-${t.id}` };
  if (t.waiting_options?.length && t.project_id && t.waiting_version !== undefined) {
    n.question = { projectId: t.project_id, taskId: t.id, version: t.waiting_version, options: t.waiting_options };
  }
  return n;
}

/** The notification for a new message that mentions the person (the server says whom a message mentions: AppState.onMentioned). */
export function mentionNote(m: Pick<Message, 'id' | 'conversationId' | 'author' | 'content'>): Note {
  const body = m.content.length > 200 ? m.content.slice(0, 199) + '…' : m.content;
  return { title: `${m.author} mentioned you`, body, path: `/conversations/${m.conversationId}`, tag: `message-${m.id}` };
}

/** Shows n: through the desktop window's binding, or the browser's Notification API once permitted. A click opens n.path. */
export async function show(n: Note, s: Session | null, open: (path: string) => void): Promise<void> {
  const desk = window.go?.app?.Desktop;
  if (s?.desktop && desk?.Notify) {
    const q = n.question;
    const sent = q && desk.NotifyQuestion
      ? desk.NotifyQuestion(n.title, n.body, q.projectId, q.taskId, q.version, q.options)
      : desk.Notify(n.title, n.body, n.path);
    await sent.catch(() => {}); // no notification service: the Inbox still shows it
    return;
  }
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  const x = new Notification(n.title, { body: n.body, tag: n.tag });
  x.onclick = () => {
    window.focus();
    open(n.path);
    x.close();
  };
}

/** The desktop window: a click on a notification comes back as the agentdesk:open event. Returns the unsubscribe. */
export function onDesktopOpen(open: (path: string) => void): () => void {
  const off = window.runtime?.EventsOn?.('agentdesk:open', (path: unknown) => {
    if (typeof path === 'string' && /^\/[a-z]+(\/\d+)?$/.test(path)) open(path);
  });
  return typeof off === 'function' ? off : () => {};
}
