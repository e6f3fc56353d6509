// A task's thread as the detail pane shows it: the conversation's entries, each answer
// preceded by the question it answered (the server keeps it on the answer, as
// `question`). The question still open is shown above the thread, with the reply box.
// Questions are not entries of the conversation itself: the contract's conversation
// holds messages, answers and comments.
import type { TaskMessage } from './types';

export type ThreadItem = { kind: 'entry'; m: TaskMessage } | { kind: 'question'; text: string };

export function threadOf(t: { conversation?: TaskMessage[] }): ThreadItem[] {
  const out: ThreadItem[] = [];
  for (const m of t.conversation ?? []) {
    if (m.question) out.push({ kind: 'question', text: m.question });
    out.push({ kind: 'entry', m });
  }
  return out;
}
