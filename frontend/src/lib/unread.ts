// Read markers (issue 43 item 6): a person's place in each conversation, kept by the
// server per person and the same on every device. The list carries the caller's
// `lastReadMessageId` and `unread` count (absent for agents); the open thread shows a
// "New" line before the first message after the marker it opened with, and viewing
// the thread's end moves the marker there (PUT .../read).
import type { Conversation } from './types';

/** The id of the first message after the marker, before which the "New" line goes; null when none is new. */
export function firstUnreadId(messages: { id: number }[], lastReadMessageId: number | undefined): number | null {
  if (lastReadMessageId === undefined) return null;
  return messages.find((m) => m.id > lastReadMessageId)?.id ?? null;
}

/** The conversation read to messageId: null when the caller has no marker or it is there already (the marker never moves back). */
export function readTo(c: Conversation, messageId: number): Conversation | null {
  if (c.lastReadMessageId === undefined || c.lastReadMessageId >= messageId) return null;
  return { ...c, lastReadMessageId: messageId, unread: 0 };
}

/** The conversation after a new message: the viewer's own is read (the server moved their marker to it), another's is one more unread. */
export function withMessage(c: Conversation, messageId: number, mine: boolean): Conversation {
  if (c.lastReadMessageId === undefined || messageId <= c.lastReadMessageId) return c;
  if (mine) return { ...c, lastReadMessageId: messageId, unread: 0 };
  return { ...c, unread: (c.unread ?? 0) + 1 };
}

/** Whether a scrolled element shows its end (within a few pixels). */
export function atEnd(el: { scrollTop: number; scrollHeight: number; clientHeight: number }): boolean {
  return el.scrollHeight - el.scrollTop - el.clientHeight < 8;
}
