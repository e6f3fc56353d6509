// The Ctrl+K jumper's matching, over what the page has loaded: tasks, conversations,
// agents and the screens; withFound adds what the server's search (GET /api/search)
// finds past what is loaded: tasks, messages and documents.
import { parse } from './router.svelte';
import type { SearchResult } from './types';

export interface JumpItem {
  kind: 'task' | 'conversation' | 'agent' | 'screen' | 'message' | 'document';
  label: string;
  /** A second line: status, participants... */
  hint: string;
  path: string;
}

export interface JumpSources {
  tasks: Iterable<{ id: number; summary: string; status: string; agent_name: string }>;
  conversations: { id: number; name: string | null; participants: string[] }[];
  agents: { id: number; name: string }[];
  screens: { key: string; label: string }[];
}

/** How well text matches the query's words: higher is better, 0 is no match. */
function score(text: string, words: string[]): number {
  const t = text.toLowerCase();
  let s = 0;
  for (const w of words) {
    const i = t.indexOf(w);
    if (i < 0) return 0;
    s += i === 0 ? 3 : /\W/.test(t[i - 1]) ? 2 : 1; // the start, a word's start, inside
  }
  return s;
}

export function jumpResults(query: string, src: JumpSources, limit = 12): JumpItem[] {
  const q = query.trim().toLowerCase();
  const idQuery = /^#?(\d+)$/.exec(q);
  const words = q.split(/\s+/).filter(Boolean);
  const scored: [number, JumpItem][] = [];
  const add = (s: number, item: JumpItem) => s > 0 && scored.push([s, item]);
  for (const sc of src.screens) {
    const s = words.length ? score(sc.label, words) : 1;
    add(s && s + 1, { kind: 'screen', label: sc.label, hint: 'Screen', path: '/' + sc.key });
  }
  if (words.length === 0) return scored.map(([, i]) => i).slice(0, limit);
  for (const t of src.tasks) {
    const s = idQuery && Number(idQuery[1]) === t.id ? 10 : score(`${t.summary} #${t.id}`, words);
    add(s, { kind: 'task', label: t.summary, hint: `#${t.id} · ${t.status}${t.agent_name ? ' · ' + t.agent_name : ''}`, path: `/board/${t.id}` });
  }
  for (const c of src.conversations) {
    const name = c.name ?? `Conversation ${c.id}`;
    add(score(name, words), { kind: 'conversation', label: name, hint: c.participants.join(', '), path: `/conversations/${c.id}` });
  }
  for (const a of src.agents) add(score(a.name, words), { kind: 'agent', label: a.name, hint: 'Agent', path: '/agents' });
  return scored
    .sort((a, b) => b[0] - a[0] || a[1].label.length - b[1].label.length)
    .map(([, i]) => i)
    .slice(0, limit);
}

/**
 * The loaded matches, then the server's search results as jump items (title, snippet,
 * link), without the tasks the loaded matches already hold.
 */
export function withFound(loaded: JumpItem[], found: SearchResult[]): JumpItem[] {
  const loadedTasks = new Set(loaded.filter((i) => i.kind === 'task').map((i) => parse(i.path).id));
  return [
    ...loaded,
    ...found
      .filter((r) => !(r.type === 'task' && loadedTasks.has(r.id)))
      .map((r): JumpItem => ({ kind: r.type, label: r.title, hint: r.snippet, path: r.url })),
  ];
}
