// The conversations state (state.svelte.ts): the list and the open thread, loaded once and
// then kept live by events, like the board's tasks; and the screen that shows it.
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { cleanup, render, fireEvent, screen } from '@testing-library/svelte';
import Conversations from '../screens/Conversations.svelte';
import { app } from './state.svelte';
import { fakeFetch, task, type Call } from './test-helpers';
import type { Conversation, DocumentInfo, Message, Participant, StreamEvent, Task } from './types';

const P = '/api/projects/p/conversations';

function conv(id: number, participants: string[] = ['ui']): Conversation {
  return { id, uuid: `00000000-0000-4000-8000-00000000000${id}`, projectId: 'p', name: `c${id}`, participants, createdAt: '2026-01-01T00:00:00Z' };
}
function msg(id: number, over: Partial<Message> = {}): Message {
  return { id, conversationId: 3, author: 'ui', authorType: 'user', content: `message ${id}`, reactions: [], mentions: [], createdAt: '2026-01-01T00:00:00Z', ...over };
}
function doc(id: number): DocumentInfo {
  return { id, conversationId: 3, name: `d${id}.txt`, mimeType: 'text/plain', size: 10, uploadedBy: 'ui', createdAt: '2026-01-01T00:00:00Z', url: `${P}/3/documents/${id}` };
}
let seq = 0;
function ev(type: string, data: unknown): StreamEvent {
  return { seq: ++seq, type: type as StreamEvent['type'], projectId: 'p', at: '2026-01-01T00:00:00Z', data };
}

/** What the server holds for conversation 3; each answer is a copy taken when the request comes. */
interface Server {
  messages: Message[];
  participants: Participant[];
  documents: DocumentInfo[];
  linked: Task[];
  reactions: { actor: string; actorKind: string; emoji: string; messageId: number }[];
}

function answer(s: Server, c: Call): unknown {
  if (c.url === `${P}/3/messages?limit=1000`) return structuredClone(s.messages);
  if (c.url === `${P}/3/documents`) return structuredClone(s.documents);
  if (c.url === `${P}/3/tasks`) return structuredClone(s.linked);
  if (c.url === '/graphql' && c.body.query.includes('participants(')) return { data: { participants: structuredClone(s.participants) } };
  if (c.url === '/graphql' && c.body.query.includes('reactions(messageId')) {
    const data: Record<string, unknown[]> = {};
    for (const r of s.reactions) (data[`m${r.messageId}`] ??= []).push(r);
    return { data };
  }
  throw new Error(`unexpected ${c.method} ${c.url}`);
}

function signIn() {
  app.reset();
  app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'messaging:read', 'messaging:write'] } };
  app.conversations = [conv(3), conv(4)];
  app.conversationsLoaded = true;
}

function server(): Server {
  return {
    messages: [msg(41, { reactions: [{ emoji: '👍', count: 1 }] }), msg(42, { author: 'worker', authorType: 'agent', agentId: 7 })],
    participants: [{ kind: 'user', name: 'ui', agentId: null, createdAt: '2026-01-01T00:00:00Z' }],
    documents: [doc(9)],
    linked: [task({ id: 5, conversation_id: 3 })],
    reactions: [{ actor: 'ui', actorKind: 'user', emoji: '👍', messageId: 41 }],
  };
}

/** Until every load of the open thread has answered. */
async function loaded() {
  await vi.waitFor(() => {
    expect(app.threadLoading).toBe(false);
    expect(app.participants).not.toBeNull();
    expect(app.documents).not.toBeNull();
    expect(app.linkedTasks).not.toBeNull();
  });
}

describe('conversations state', () => {
  beforeEach(signIn);

  it('opens a thread: messages, participants, documents, linked tasks and the viewer’s own reactions', async () => {
    const s = server();
    fakeFetch((c) => answer(s, c));
    await app.openThread(3);
    await loaded();
    expect(app.threadId).toBe(3);
    expect(app.thread.map((m) => m.id)).toEqual([41, 42]);
    expect(app.participants!.map((p) => p.name)).toEqual(['ui']);
    expect(app.documents!.map((d) => d.id)).toEqual([9]);
    expect(app.linkedTasks!.map((t) => t.id)).toEqual([5]);
    expect([...app.myReactions]).toEqual(['41:👍']);
  });

  it('applies events to the list and to the open thread, and leaves other threads alone', async () => {
    const s = server();
    fakeFetch((c) => answer(s, c));
    await app.openThread(3);
    await loaded();

    app.apply(ev('conversation.created', conv(8)));
    app.apply(ev('conversation.created', conv(8))); // twice: still once
    expect(app.conversations.map((c) => c.id)).toEqual([3, 4, 8]);

    app.apply(ev('message.created', msg(43, { author: 'worker', authorType: 'agent', agentId: 7 })));
    app.apply(ev('message.created', msg(50, { conversationId: 4 })));
    expect(app.thread.map((m) => m.id)).toEqual([41, 42, 43]);

    // Someone else's reaction changes the counts; the viewer's own also marks the chip as theirs.
    app.apply(ev('reaction.added', { conversationId: 3, messageId: 42, emoji: '🎉', actorKind: 'agent', actor: 'worker', createdAt: '', reactions: [{ emoji: '🎉', count: 1 }] }));
    expect(app.thread.find((m) => m.id === 42)!.reactions).toEqual([{ emoji: '🎉', count: 1 }]);
    expect(app.myReactions.has('42:🎉')).toBe(false);
    app.apply(ev('reaction.added', { conversationId: 3, messageId: 42, emoji: '🎉', actorKind: 'user', actor: 'ui', createdAt: '', reactions: [{ emoji: '🎉', count: 2 }] }));
    expect(app.thread.find((m) => m.id === 42)!.reactions).toEqual([{ emoji: '🎉', count: 2 }]);
    expect(app.myReactions.has('42:🎉')).toBe(true);
    app.apply(ev('reaction.removed', { conversationId: 3, messageId: 41, emoji: '👍', actorKind: 'user', actor: 'ui', createdAt: '', reactions: [] }));
    expect(app.thread.find((m) => m.id === 41)!.reactions).toEqual([]);
    expect(app.myReactions.has('41:👍')).toBe(false);

    // Participants: the list's names and the open thread's panel (REST's participant has no agentId for users).
    app.apply(ev('participant.added', { conversationId: 3, participant: { kind: 'agent', name: 'worker', agentId: 7, createdAt: '2026-01-02T00:00:00Z' } }));
    app.apply(ev('participant.added', { conversationId: 4, participant: { kind: 'user', name: 'bob', createdAt: '2026-01-02T00:00:00Z' } }));
    expect(app.conversations.find((c) => c.id === 3)!.participants).toEqual(['ui', 'worker']);
    expect(app.conversations.find((c) => c.id === 4)!.participants).toEqual(['ui', 'bob']);
    expect(app.participants).toEqual([
      { kind: 'user', name: 'ui', agentId: null, createdAt: '2026-01-01T00:00:00Z' },
      { kind: 'agent', name: 'worker', agentId: 7, createdAt: '2026-01-02T00:00:00Z' },
    ]);
    app.apply(ev('participant.removed', { conversationId: 3, participant: { kind: 'user', name: 'ui', createdAt: '2026-01-01T00:00:00Z' } }));
    expect(app.participants!.map((p) => p.name)).toEqual(['worker']);
    expect(app.conversations.find((c) => c.id === 3)!.participants).toEqual(['worker']);

    app.apply(ev('document.created', doc(10)));
    app.apply(ev('document.created', { ...doc(11), conversationId: 4 }));
    expect(app.documents!.map((d) => d.id)).toEqual([9, 10]);

    // A task created in the conversation joins its linked tasks; a deleted one leaves.
    app.apply(ev('task.created', task({ id: 6, conversation_id: 3 })));
    app.apply(ev('task.created', task({ id: 7, conversation_id: 4 })));
    expect(app.linkedTasks!.map((t) => t.id)).toEqual([5, 6]);
    app.apply(ev('task.deleted', { id: 5 }));
    expect(app.linkedTasks!.map((t) => t.id)).toEqual([6]);
  });

  it('keeps what events brought while the thread was loading, when the answers are older', async () => {
    // The answers are the server's state when the requests came, held until the events below are in.
    const s = server();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fakeFetch(async (c) => {
      const a = answer(s, c);
      await held;
      return a;
    });
    const opening = app.openThread(3);
    await vi.waitFor(() => expect(app.threadLoading).toBe(true));
    // Changes on the server after it answered, and their events.
    s.messages.push(msg(43));
    app.apply(ev('message.created', msg(43)));
    s.messages[1].reactions = [{ emoji: '👀', count: 1 }];
    s.reactions.push({ actor: 'ui', actorKind: 'user', emoji: '👀', messageId: 42 });
    app.apply(ev('reaction.added', { conversationId: 3, messageId: 42, emoji: '👀', actorKind: 'user', actor: 'ui', createdAt: '', reactions: [{ emoji: '👀', count: 1 }] }));
    s.participants.push({ kind: 'agent', name: 'worker', agentId: 7, createdAt: '' });
    app.apply(ev('participant.added', { conversationId: 3, participant: { kind: 'agent', name: 'worker', agentId: 7, createdAt: '' } }));
    s.documents.push(doc(10));
    app.apply(ev('document.created', doc(10)));
    s.linked.push(task({ id: 6, conversation_id: 3 }));
    app.apply(ev('task.created', task({ id: 6, conversation_id: 3 })));
    release();
    await opening;
    await loaded();
    expect(app.thread.map((m) => m.id)).toEqual([41, 42, 43]);
    expect(app.thread.find((m) => m.id === 42)!.reactions).toEqual([{ emoji: '👀', count: 1 }]);
    expect(app.myReactions.has('42:👀')).toBe(true);
    expect(app.participants!.map((p) => p.name)).toEqual(['ui', 'worker']);
    expect(app.documents!.map((d) => d.id)).toEqual([9, 10]);
    expect(app.linkedTasks!.map((t) => t.id)).toEqual([5, 6]);
  });

  it('drops the answers of a thread closed before they came', async () => {
    const s = server();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    fakeFetch(async (c) => {
      const a = answer(s, c);
      await held;
      return a;
    });
    const opening = app.openThread(3);
    app.closeThread();
    release();
    await opening;
    expect(app.threadId).toBeNull();
    expect(app.thread).toEqual([]);
    expect(app.participants).toBeNull();
    expect(app.documents).toBeNull();
  });
});

describe('conversations screen', () => {
  afterEach(cleanup);
  beforeEach(signIn);

  it('shows the open thread and follows its events', async () => {
    const s = server();
    const calls = fakeFetch((c) => {
      if (c.method === 'POST' && c.url === '/graphql' && c.body.query.includes('addReaction')) {
        return { data: { addReaction: { id: c.body.variables.m, reactions: [{ emoji: c.body.variables.e, count: 1 }] } } };
      }
      return answer(s, c);
    });
    render(Conversations, { selected: 3 });
    await vi.waitFor(() => expect(document.querySelectorAll('[data-testid="message"]')).toHaveLength(2));
    await loaded();
    const side = screen.getByRole('complementary', { name: 'Conversation details' });
    expect(side.textContent).toContain('d9.txt');
    expect(screen.getByRole('button', { name: '👍 1' }).getAttribute('aria-pressed')).toBe('true');

    app.apply(ev('message.created', msg(43, { content: 'Arrived live' })));
    app.apply(ev('participant.added', { conversationId: 3, participant: { kind: 'agent', name: 'worker', agentId: 7, createdAt: '' } }));
    await vi.waitFor(() => {
      expect(screen.getByText('Arrived live')).toBeTruthy();
      expect(side.textContent).toContain('worker');
    });

    // A reaction of the viewer's own: the chip shows as theirs.
    const m42 = document.querySelector<HTMLElement>('[data-message-id="42"]')!;
    await fireEvent.click(m42.querySelector<HTMLElement>('[aria-label="Add a reaction"]')!);
    await fireEvent.click(screen.getByRole('button', { name: '🎉' }));
    await vi.waitFor(() => expect(screen.getByRole('button', { name: '🎉 1' }).getAttribute('aria-pressed')).toBe('true'));
    expect(calls.filter((c) => c.body?.query?.includes('addReaction'))).toHaveLength(1);
  });
});
