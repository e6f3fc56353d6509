// Read markers in the UI (unread.ts and the conversations state): the list's unread
// counts, the thread's "New" line, and marking read when the thread's end is seen.
import { describe, it, expect, beforeEach } from 'vitest';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import type { Conversation, Message, StreamEvent } from './types';
import { atEnd, firstUnreadId, readTo, withMessage } from './unread';

const P = '/api/projects/p/conversations';

function conv(id: number, lastReadMessageId?: number, unread?: number): Conversation {
  return { id, uuid: `u${id}`, projectId: 'p', name: `c${id}`, participants: ['ui'], createdAt: '2026-01-01T00:00:00Z', lastReadMessageId, unread };
}
function msg(id: number, over: Partial<Message> = {}): Message {
  return { id, conversationId: 3, author: 'worker', authorType: 'agent', agentId: 7, content: `m${id}`, reactions: [], mentions: [], createdAt: '2026-01-01T00:00:00Z', ...over };
}
let seq = 0;
function ev(type: string, data: unknown): StreamEvent {
  return { seq: ++seq, type: type as StreamEvent['type'], projectId: 'p', at: '2026-01-01T00:00:00Z', data };
}

describe('read marker logic', () => {
  it('puts the New line before the first message after the marker', () => {
    const ms = [{ id: 5 }, { id: 8 }, { id: 9 }];
    expect(firstUnreadId(ms, 5)).toBe(8);
    expect(firstUnreadId(ms, 0)).toBe(5);
    expect(firstUnreadId(ms, 9)).toBeNull();
    expect(firstUnreadId(ms, undefined)).toBeNull(); // no marker (not a person)
  });

  it('moves the marker forward only', () => {
    expect(readTo(conv(3, 5, 2), 9)).toMatchObject({ lastReadMessageId: 9, unread: 0 });
    expect(readTo(conv(3, 9, 0), 9)).toBeNull();
    expect(readTo(conv(3, 9, 0), 5)).toBeNull();
    expect(readTo(conv(3), 9)).toBeNull();
  });

  it('counts another’s new message, and reads the viewer’s own', () => {
    expect(withMessage(conv(3, 5, 1), 9, false)).toMatchObject({ lastReadMessageId: 5, unread: 2 });
    expect(withMessage(conv(3, 5, 1), 9, true)).toMatchObject({ lastReadMessageId: 9, unread: 0 });
    expect(withMessage(conv(3, 9, 0), 9, false)).toMatchObject({ lastReadMessageId: 9, unread: 0 }); // already counted
    expect(withMessage(conv(3), 9, false)).toEqual(conv(3));
  });

  it('knows when a scrolled pane shows its end', () => {
    expect(atEnd({ scrollTop: 600, scrollHeight: 1000, clientHeight: 400 })).toBe(true);
    expect(atEnd({ scrollTop: 595, scrollHeight: 1000, clientHeight: 400 })).toBe(true);
    expect(atEnd({ scrollTop: 100, scrollHeight: 1000, clientHeight: 400 })).toBe(false);
  });
});

describe('read markers in the conversations state', () => {
  beforeEach(() => {
    app.reset();
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['messaging:read', 'messaging:write'] } };
    app.conversations = [conv(3, 41, 2), conv(4, 50, 0)];
    app.conversationsLoaded = true;
  });

  it('marks the open thread read once, keeping the New line where it was', async () => {
    const calls = fakeFetch((c) => {
      if (c.url === `${P}/3/messages?limit=1000`) return [msg(41, { author: 'ui', authorType: 'user', agentId: undefined }), msg(42), msg(43)];
      if (c.method === 'PUT') return new Response(null, { status: 204 });
      if (c.url === '/graphql') return { data: { participants: [] } };
      return [];
    });
    await app.openThread(3);
    await app.markThreadRead();
    await app.markThreadRead();
    const puts = calls.filter((c) => c.method === 'PUT');
    expect(puts).toEqual([expect.objectContaining({ url: `${P}/3/read`, body: { lastReadMessageId: 43 } })]);
    expect(app.threadNewFrom).toBe(42);
    expect(app.conversations[0]).toMatchObject({ lastReadMessageId: 43, unread: 0 });

    // A message arriving in the open thread counts until the end is seen again; the line stays.
    app.apply(ev('message.created', msg(44)));
    expect(app.conversations[0]).toMatchObject({ lastReadMessageId: 43, unread: 1 });
    await app.markThreadRead();
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ lastReadMessageId: 43 }, { lastReadMessageId: 44 }]);
    expect(app.threadNewFrom).toBe(42);
  });

  it('counts new messages of other conversations, but not the viewer’s own', () => {
    app.apply(ev('message.created', msg(51, { conversationId: 4 })));
    app.apply(ev('message.created', msg(52, { conversationId: 4 })));
    expect(app.conversations[1]).toMatchObject({ lastReadMessageId: 50, unread: 2 });
    app.apply(ev('message.created', msg(53, { conversationId: 4, author: 'ui', authorType: 'user', agentId: undefined })));
    expect(app.conversations[1]).toMatchObject({ lastReadMessageId: 53, unread: 0 });
    // A new conversation starts unread at nothing; its first message counts.
    app.apply(ev('conversation.created', { ...conv(9), lastReadMessageId: undefined, unread: undefined }));
    app.apply(ev('message.created', msg(60, { conversationId: 9 })));
    expect(app.conversations.find((c) => c.id === 9)).toMatchObject({ lastReadMessageId: 0, unread: 1 });
  });

  it('shows no New line when nothing was unread', async () => {
    app.conversations = [conv(3, 43, 0)];
    fakeFetch((c) => (c.url === `${P}/3/messages?limit=1000` ? [msg(42), msg(43)] : c.url === '/graphql' ? { data: { participants: [] } } : []));
    await app.openThread(3);
    await app.markThreadRead();
    expect(app.threadNewFrom).toBeNull();
  });
});
