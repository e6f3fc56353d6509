// Mentions (docs/rest.md, "Mentions"): the server decides whom a message mentions, when it
// is posted, and sends the list with the message (`mentions`, each with the text that
// named them). The UI only helps to write them (suggestions after "@") and shows them
// (the text of each mention highlighted).
import type { Message } from './types';

/** Someone a message can mention: an agent, or a member (with their email's local part, another way to name them). */
export interface Mentionable {
  kind: 'user' | 'agent';
  name: string;
  alias?: string;
}

/** Characters that continue a word: the server's rule for where a name ends. */
const NAME_CHAR = /[\p{L}\p{N}_-]/u;

/** The "@..." being typed before the caret, or null: an "@" at the start or after a non-word character, with no line break since. */
export function mentionQuery(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const at = before.lastIndexOf('@');
  if (at < 0 || (at > 0 && (NAME_CHAR.test(before[at - 1]) || before[at - 1] === '@'))) return null;
  const query = before.slice(at + 1);
  if (/[\n@]/.test(query) || query.length > 64) return null;
  return { start: at, query };
}

/** Who fits a query, at most `limit`: names (or a word of them, or the alias) that start with it, case ignored; agents first. */
export function suggest(query: string, all: Mentionable[], limit = 6): Mentionable[] {
  const q = query.toLowerCase();
  const fits = (m: Mentionable) =>
    m.name.toLowerCase().startsWith(q) || m.name.toLowerCase().split(/\s+/).some((w) => w.startsWith(q)) || !!m.alias?.toLowerCase().startsWith(q);
  return all
    .filter(fits)
    .sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'agent' ? -1 : 1))
    .slice(0, limit);
}

/** text with the "@query" at start..caret replaced by "@name ", and where the caret goes after it. */
export function insertMention(text: string, start: number, caret: number, name: string): { text: string; caret: number } {
  const inserted = `@${name} `;
  return { text: text.slice(0, start) + inserted + text.slice(caret), caret: start + inserted.length };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Wraps, in rendered (sanitised) HTML, each text that mentioned someone in a
 * `<span class="mention">`: outside code and links, where the server found it (not inside
 * a word, ending where a word ends).
 */
export function highlightMentions(html: string, mentions: Message['mentions'] | undefined): string {
  const texts = [...new Set((mentions ?? []).map((m) => m.text))].sort((a, b) => b.length - a.length);
  if (texts.length === 0 || typeof document === 'undefined') return html;
  const re = new RegExp(`(?<![\\p{L}\\p{N}_@-])(?:${texts.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}_-])`, 'giu');
  const root = document.createElement('template');
  root.innerHTML = html;
  const walker = document.createTreeWalker(root.content, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!(n.parentElement?.closest('code, pre, a'))) nodes.push(n as Text);
  }
  for (const node of nodes) {
    const s = node.data;
    re.lastIndex = 0;
    if (!re.test(s)) continue;
    re.lastIndex = 0;
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of s.matchAll(re)) {
      frag.append(s.slice(last, m.index));
      const span = document.createElement('span');
      span.className = 'mention';
      span.textContent = m[0];
      frag.append(span);
      last = m.index! + m[0].length;
    }
    frag.append(s.slice(last));
    node.replaceWith(frag);
  }
  return root.innerHTML;
}
