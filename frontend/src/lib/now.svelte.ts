// The current time for relative labels ("waiting 12 m", "last seen 3 m ago"): one
// timer for the whole UI, ticking every 15 seconds while anything reads it.
import { createSubscriber } from 'svelte/reactivity';

const subscribe = createSubscriber((update) => {
  const timer = setInterval(update, 15_000);
  return () => clearInterval(timer);
});

/** Date.now(), re-read by effects and templates every 15 s. */
export function now(): number {
  subscribe();
  return Date.now();
}
