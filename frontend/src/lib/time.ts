// Relative times ("12 m", "3 h") and agent presence, as pure functions the screens use
// with a clock that ticks (now.svelte.ts) and Vitest checks.

/** A short duration: "now", "45 s", "12 m", "3 h", "2 d". */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 10) return 'now';
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} d`;
}

/** "12 m ago", "just now"; '' without a time. */
export function ago(at: string | null | undefined, now: number): string {
  if (!at) return '';
  const d = shortDuration(now - Date.parse(at));
  return d === 'now' ? 'just now' : `${d} ago`;
}

/** Online when the agent's last contact is this recent. */
export const ONLINE_MS = 2 * 60 * 1000;
/** A task given to an agent not seen for this long gets a warning. */
export const STALE_MS = 60 * 60 * 1000;

export interface Presence {
  online: boolean;
  /** Not seen for an hour, or never: tasks given to it may wait. */
  stale: boolean;
  /** "online", "last seen 3 h ago", "never seen". */
  label: string;
}

export function presence(lastSeenAt: string | null | undefined, now: number): Presence {
  if (!lastSeenAt) return { online: false, stale: true, label: 'never seen' };
  const age = now - Date.parse(lastSeenAt);
  if (age < ONLINE_MS) return { online: true, stale: false, label: 'online' };
  return { online: false, stale: age >= STALE_MS, label: `last seen ${ago(lastSeenAt, now)}` };
}
