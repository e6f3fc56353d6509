import { Marked, type Tokens } from 'marked';
import DOMPurify from 'dompurify';

// Agents write Markdown; people read it rendered. Two locks, so that neither alone has to
// be perfect: marked never passes raw HTML through (it shows as text), and DOMPurify then
// keeps only the few tags and attributes that Markdown itself produces.

function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const marked = new Marked({ gfm: true, breaks: true, async: false });
marked.use({
  renderer: {
    // Raw HTML in the text is shown as written, never interpreted.
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escape(text),
    // Images would load from anywhere (and the page's policy blocks them): a link instead.
    image: ({ href, text }: Tokens.Image) => `<a href="${escape(href)}">${escape(text || href)}</a>`,
  },
});

const ALLOWED_TAGS = [
  'p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'hr',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
];
const ALLOWED_ATTR = ['href', 'title', 'align', 'start'];
// Web and mail links only: no javascript:, data:, vbscript: or anything else.
const SAFE_URL = /^(?:https?:|mailto:|#|\/(?!\/)|\.{0,2}\/)/i;

let hooked = false;
function hook() {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName !== 'A') return;
    const href = node.getAttribute('href') ?? '';
    if (!SAFE_URL.test(href.trim())) node.removeAttribute('href');
    // Links leave the app in a new tab, without telling the target where they came from.
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  });
}

/** Markdown to HTML that is safe to insert with {@html}. */
export function renderMarkdown(text: string | null | undefined): string {
  if (!text) return '';
  if (!DOMPurify.isSupported) return `<p>${escape(text)}</p>`; // no DOM to clean with: plain text
  hook();
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, { ALLOWED_TAGS, ALLOWED_ATTR, ADD_ATTR: ['target', 'rel'], ALLOW_DATA_ATTR: false });
}
