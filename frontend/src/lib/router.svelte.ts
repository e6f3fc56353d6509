// A small history-API router: the server answers every page path with index.html.
export const route = $state({ path: typeof location === 'undefined' ? '/' : location.pathname });

export function go(path: string, replace = false): void {
  if (path === route.path) return;
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  route.path = path;
}

if (typeof window !== 'undefined') {
  addEventListener('popstate', () => (route.path = location.pathname));
}

/** The screen a path shows, and its id (a task or a conversation). */
export function parse(path: string): { screen: string; id: number | null } {
  const parts = path.split('/').filter(Boolean);
  const screen = parts[0] ?? 'board';
  const id = parts[1] !== undefined && /^\d+$/.test(parts[1]) ? Number(parts[1]) : null;
  if (screen === 'tasks') return { screen: 'board', id };
  return { screen, id };
}
