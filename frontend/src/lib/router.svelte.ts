// A small history-API router: the server answers every page path with index.html.
//
// In the desktop window (a wails: page) routes live in the hash instead (#/inbox):
// Wails gives the page its bindings (window.go, and with them the session) only at "/",
// so the page must never leave "/" or a reload would fall back to the sign-in form.
const hashRouting = typeof location !== 'undefined' && location.protocol === 'wails:';

function current(): string {
  if (typeof location === 'undefined') return '/';
  return hashRouting ? location.hash.slice(1) || '/' : location.pathname;
}

export const route = $state({ path: current() });

export function go(path: string, replace = false): void {
  if (path === route.path) return;
  const url = hashRouting ? '#' + path : path;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  route.path = path;
}

if (typeof window !== 'undefined') {
  addEventListener('popstate', () => (route.path = current()));
}

/** The screen a path shows, and its id (a task or a conversation). */
export function parse(path: string): { screen: string; id: number | null } {
  const parts = path.split('/').filter(Boolean);
  const screen = parts[0] ?? 'board';
  const id = parts[1] !== undefined && /^\d+$/.test(parts[1]) ? Number(parts[1]) : null;
  if (screen === 'tasks') return { screen: 'board', id };
  return { screen, id };
}

/** The href of a path: a real link, so that middle-click, Ctrl+click and "copy link" work. */
export function href(path: string): string {
  return hashRouting ? '#' + path : path;
}

/**
 * A link's click: a plain left click stays in the page (go); a click with a modifier
 * key (new tab, new window, download) or another button is left to the browser.
 */
export function follow(e: MouseEvent, path: string): void {
  if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  go(path);
}
