import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { cleanup, render, fireEvent } from '@testing-library/svelte';
import { mentionNote, waitingNote, show, onDesktopOpen } from './notify';
import type { Session } from './api';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import Inbox from '../screens/Inbox.svelte';
import App from '../App.svelte';

const browser: Session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'dana', projectId: 'p', scopes: ['task:read'] } };

/** A Notification double: records what is shown, with the permission given. */
function fakeNotification(permission: NotificationPermission) {
  const shown: { title: string; body?: string; tag?: string; onclick: (() => void) | null; close: () => void }[] = [];
  class FakeNotification {
    static permission = permission;
    static requestPermission = vi.fn(async () => permission);
    onclick: (() => void) | null = null;
    close = vi.fn();
    constructor(public title: string, opts: NotificationOptions) {
      shown.push(Object.assign(this, { body: opts.body, tag: opts.tag }));
    }
  }
  vi.stubGlobal('Notification', FakeNotification);
  return { shown, requestPermission: FakeNotification.requestPermission };
}

describe('notes', () => {
  it('makes a note for a message that mentions the person, opening its conversation', () => {
    const m = { id: 9, conversationId: 3, author: 'deployer', content: '@dana which region?' };
    expect(mentionNote(m)).toEqual({ title: 'deployer mentioned you', body: '@dana which region?', path: '/conversations/3', tag: 'message-9' });
    expect(mentionNote({ ...m, content: '@dana ' + 'x'.repeat(500) }).body).toHaveLength(200);
  });

  it('makes a note for a waiting task, opening the task', () => {
    const n = waitingNote({ id: 12, summary: 'Deploy', waiting_type: 'question', waiting_details: 'Which region?' } as any);
    expect(n.path).toBe('/tasks/12');
    expect(n.title).toBe('Waiting: Deploy');
  });
});

describe('show', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    delete window.go;
    delete window.runtime;
  });

  it('uses the browser API once permitted; a click opens the path', async () => {
    const { shown } = fakeNotification('granted');
    const open = vi.fn();
    await show({ title: 'T', body: 'B', path: '/tasks/4', tag: 'task-4' }, browser, open);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({ title: 'T', body: 'B', tag: 'task-4' });
    shown[0].onclick!();
    expect(open).toHaveBeenCalledWith('/tasks/4');
  });

  it('shows nothing before permission', async () => {
    const { shown, requestPermission } = fakeNotification('default');
    await show({ title: 'T', body: 'B', path: '/tasks/4', tag: 'task-4' }, browser, vi.fn());
    expect(shown).toHaveLength(0);
    expect(requestPermission).not.toHaveBeenCalled(); // never asked from here
  });

  it('goes through the desktop binding in the window, whose click comes back as agentdesk:open', async () => {
    const { shown } = fakeNotification('granted');
    const notify = vi.fn(async () => {});
    let listener: ((...d: unknown[]) => void) | undefined;
    window.go = { app: { Desktop: { Notify: notify } } };
    window.runtime = { EventsOn: (name, cb) => ((listener = name === 'agentdesk:open' ? cb : undefined), () => {}) };
    await show({ title: 'T', body: 'B', path: '/conversations/3', tag: 'm' }, { ...browser, desktop: true }, vi.fn());
    expect(notify).toHaveBeenCalledWith('T', 'B', '/conversations/3');
    expect(shown).toHaveLength(0);

    const open = vi.fn();
    onDesktopOpen(open);
    listener!('/conversations/3');
    listener!('javascript:alert(1)');
    expect(open).toHaveBeenCalledTimes(1);
    expect(open).toHaveBeenCalledWith('/conversations/3');
  });

  it('sends a question with options through NotifyQuestion in the window, whose buttons answer it', async () => {
    const notify = vi.fn(async () => {});
    const notifyQuestion = vi.fn(async () => {});
    window.go = { app: { Desktop: { Notify: notify, NotifyQuestion: notifyQuestion } } };
    const task = { id: 7, summary: 'release', project_id: 'prj_a', waiting_version: 3, waiting_details: 'Ship it?', waiting_options: ['Approve', 'Reject'] };
    await show(waitingNote(task), { ...browser, desktop: true }, vi.fn());
    expect(notifyQuestion).toHaveBeenCalledWith('Waiting: release', 'Ship it?', 'prj_a', 7, 3, ['Approve', 'Reject']);
    expect(notify).not.toHaveBeenCalled();
    // Without options it is an ordinary notification.
    await show(waitingNote({ ...task, waiting_options: null }), { ...browser, desktop: true }, vi.fn());
    expect(notify).toHaveBeenCalledWith('Waiting: release', 'Ship it?', '/tasks/7');
  });
});

describe('asking for permission', () => {
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });
  beforeEach(() => {
    app.session = browser;
    app.tasksLoaded = true;
    app.tasks = new Map();
  });

  it('is not done on load or on any click, only by the Inbox button', async () => {
    const { requestPermission } = fakeNotification('default');
    fakeFetch(() => new Response('{}', { status: 401 }));
    render(App);
    await fireEvent.pointerDown(document.body);
    await fireEvent.click(document.body);
    expect(requestPermission).not.toHaveBeenCalled();
    cleanup();

    const inbox = render(Inbox);
    const button = inbox.getByText(/Notify me when an agent asks or mentions me/);
    await fireEvent.click(button);
    expect(requestPermission).toHaveBeenCalledTimes(1);
  });

  it('is not offered in the desktop window, which notifies without asking', () => {
    fakeNotification('default');
    app.session = { ...browser, desktop: true };
    const inbox = render(Inbox);
    expect(inbox.queryByText(/Notify me/)).toBeNull();
  });
});
