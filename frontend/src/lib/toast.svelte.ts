// Toasts: short messages in a corner; errors carry the server's error.message.
// Calm by rule: each goes away by itself (errors stay longer, to be read), at most
// MAX_TOASTS show at once (the oldest goes), and the same message again restarts the
// one showing instead of stacking a copy. A message already shown beside a form is not
// sent here too (the forms keep their own errors).
export interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
  /** A button in the toast (Undo); clicking it runs it and dismisses the toast. */
  action?: ToastAction;
  /** A page path: the toast's text is a link there ("Created #12" opens task 12). */
  link?: string;
}

export interface ToastAction {
  label: string;
  run: () => void;
}

export const MAX_TOASTS = 3;
export const INFO_MS = 4000;
export const ERROR_MS = 10000;

let next = 1;
export const toasts = $state<Toast[]>([]);
const timers = new Map<number, ReturnType<typeof setTimeout>>();

function schedule(id: number, ms: number) {
  clearTimeout(timers.get(id));
  if (ms > 0) timers.set(id, setTimeout(() => dismiss(id), ms));
}

export function toast(text: string, kind: Toast['kind'] = 'info', ms = kind === 'error' ? ERROR_MS : INFO_MS, action?: ToastAction, link?: string): void {
  const same = toasts.find((t) => t.text === text && t.kind === kind);
  if (same && !action && !same.action) {
    schedule(same.id, ms);
    return;
  }
  if (same) dismiss(same.id); // an Undo belongs to the latest change only
  while (toasts.length >= MAX_TOASTS) dismiss(toasts[0].id);
  const id = next++;
  toasts.push({ id, kind, text, action, link });
  schedule(id, ms);
}

/** Runs a toast's action, once, and dismisses it. */
export function act(t: Toast): void {
  dismiss(t.id);
  t.action?.run();
}

export function toastError(e: unknown): void {
  const text = e instanceof Error ? e.message : String(e);
  toast(text, 'error');
}

export function dismiss(id: number): void {
  clearTimeout(timers.get(id));
  timers.delete(id);
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}
