import { describe, it, expect } from 'vitest';
import { threadOf } from './thread';

const at = '2026-11-24T09:00:00Z';

describe('thread', () => {
  it('puts each answered question above its answer', () => {
    const items = threadOf({
      conversation: [
        { role: 'assistant', content: 'I need to know.', created_at: at, author: 'worker' },
        { role: 'user', content: 'PDF', created_at: at, author: 'Dana', question: 'Which format?' },
      ],
    });
    expect(items.map((i) => (i.kind === 'entry' ? i.m.content : `? ${i.text}`))).toEqual(['I need to know.', '? Which format?', 'PDF']);
  });

  it('is empty for a task without a conversation', () => {
    expect(threadOf({})).toEqual([]);
  });
});
