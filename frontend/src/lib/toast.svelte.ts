// Toasts: short messages in a corner; errors carry the server's error.message.
export interface Toast {
  id: number;
  kind: 'error' | 'info';
  text: string;
}

let next = 1;
export const toasts = $state<Toast[]>([]);

export function toast(text: string, kind: Toast['kind'] = 'info', ms = 5000): void {
  const id = next++;
  toasts.push({ id, kind, text });
  if (ms > 0) setTimeout(() => dismiss(id), ms);
}

export function toastError(e: unknown): void {
  const text = e instanceof Error ? e.message : String(e);
  toast(text, 'error', 8000);
}

export function dismiss(id: number): void {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}
