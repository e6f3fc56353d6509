// Reading a file for a knowledge base in the browser. The REST upload
// (POST /api/vector/spaces/{id}/documents, multipart) takes data tokens only, so the UI,
// signed in with a platform token, sends the file's text through GraphQL
// addVectorDocument: txt and md as they are, HTML as Markdown-like text (headings kept,
// so that the server cuts chunks under them). PDFs need the server's text extraction.
import { GRAPHQL_MAX_BODY } from './api';

export const ACCEPT = '.txt,.md,.markdown,.html,.htm,text/plain,text/markdown,text/html';

export function kindOf(name: string): 'text' | 'html' | 'pdf' | 'other' {
  const ext = name.toLowerCase().split('.').pop() ?? '';
  if (['txt', 'md', 'markdown', 'text'].includes(ext)) return 'text';
  if (['html', 'htm'].includes(ext)) return 'html';
  if (ext === 'pdf') return 'pdf';
  return 'other';
}

/** The visible text of an HTML page, with its headings as Markdown headings. */
export function htmlToText(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  doc.querySelectorAll('script, style, noscript, template, head').forEach((n) => n.remove());
  const out: string[] = [];
  const block = /^(P|DIV|SECTION|ARTICLE|LI|TR|PRE|BLOCKQUOTE|TABLE|UL|OL|MAIN|HEADER|FOOTER|NAV|ASIDE|DD|DT|FIGURE)$/;
  let line = '';
  const flush = () => {
    const t = line.replace(/\s+/g, ' ').trim();
    if (t) out.push(t);
    line = '';
  };
  const walk = (n: Node) => {
    if (n.nodeType === 3) {
      line += n.textContent ?? '';
      return;
    }
    if (n.nodeType !== 1) return;
    const el = n as Element;
    const h = /^H([1-6])$/.exec(el.tagName);
    if (h) {
      flush();
      const t = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (t) out.push('#'.repeat(Number(h[1])) + ' ' + t);
      return;
    }
    if (el.tagName === 'BR') return flush();
    const isBlock = block.test(el.tagName);
    if (isBlock) flush();
    el.childNodes.forEach(walk);
    if (isBlock) flush();
  };
  walk(doc.body ?? doc.documentElement);
  flush();
  return out.join('\n\n');
}

/** The text to index for a file, or an error saying why the browser cannot send it. */
export async function readDocument(file: File): Promise<string> {
  const kind = kindOf(file.name);
  if (kind === 'pdf')
    throw new Error(`${file.name}: PDFs need the server's text extraction, which the REST upload does and it takes data tokens only. Upload it with a data token (see docs/knowledge.md), or paste its text.`);
  if (kind === 'other') throw new Error(`${file.name}: the web UI adds .txt, .md and .html files; paste other text below.`);
  const raw = await file.text();
  const text = kind === 'html' ? htmlToText(raw) : raw;
  if (!text.trim()) throw new Error(`${file.name} has no text.`);
  // JSON escaping may grow the text; keep room for the query around it.
  if (new TextEncoder().encode(JSON.stringify(text)).length > GRAPHQL_MAX_BODY - 4096)
    throw new Error(`${file.name} is over the 1 MiB a GraphQL request may carry. Split it, or upload it with a data token through REST (25 MiB).`);
  return text;
}
