// Undo for moving and deleting a task. A move is undone by moving it back. A delete is
// held for UNDO_MS before it is sent (the task leaves the board at once), so that Undo
// can simply put it back; leaving the page sends the held deletes at once.
import { app } from './state.svelte';
import { api } from './api';
import { toast, toastError } from './toast.svelte';
import type { Status, Task } from './types';

export const UNDO_MS = 6000;

const held = new Map<number, { task: Task; timer: ReturnType<typeof setTimeout> }>();

/** Deletes a task with an Undo: gone from the page now, from the server in UNDO_MS. */
export function deleteWithUndo(task: Task): void {
  app.remove(task.id);
  const timer = setTimeout(() => void send(task.id), UNDO_MS);
  held.set(task.id, { task, timer });
  toast(`Deleted #${task.id} "${task.summary}".`, 'info', UNDO_MS, {
    label: 'Undo',
    run: () => {
      const h = held.get(task.id);
      if (!h) return;
      clearTimeout(h.timer);
      held.delete(task.id);
      app.put(h.task, false, true); // back in its column, its count up again
    },
  });
}

async function send(id: number, keepalive = false): Promise<void> {
  const h = held.get(id);
  if (!h) return;
  held.delete(id);
  clearTimeout(h.timer);
  try {
    await api.deleteTask(id, keepalive);
  } catch (e) {
    app.put(h.task, false, true); // not deleted after all: show it again (and count it), saying why
    toastError(e);
  }
}

/** Sends every held delete now (the page is going away). */
export function flushDeletes(): void {
  for (const id of [...held.keys()]) void send(id, true);
}

let undoing = false;

/** Offers Undo after each move the server took; the undo itself offers none. */
export function offerMoveUndo(id: number, from: Status, to: Status): void {
  if (undoing) return;
  toast(`Moved #${id} to ${to}.`, 'info', UNDO_MS, {
    label: 'Undo',
    run: () => {
      undoing = true;
      app
        .move(id, from)
        .catch(toastError)
        .finally(() => (undoing = false));
    },
  });
}
