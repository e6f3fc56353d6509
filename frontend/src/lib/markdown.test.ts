// @vitest-environment jsdom
// jsdom, not happy-dom: DOMPurify passes markup through unchanged under happy-dom, which
// would test nothing. Real browsers behave like jsdom here (and the e2e run checks one).
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

/** Renders into a real (happy-dom) element, as {@html} does, and returns it. */
function mount(md: string): HTMLElement {
  const el = document.createElement('div');
  el.innerHTML = renderMarkdown(md);
  return el;
}

/** Nothing in the element can run code or load anything. */
function expectInert(el: HTMLElement) {
  expect(el.querySelectorAll('script, iframe, object, embed, svg, math, style, img, form, input, link, meta, base').length).toBe(0);
  for (const n of el.querySelectorAll('*')) {
    for (const a of Array.from(n.attributes)) {
      expect(a.name.startsWith('on'), `${n.tagName} ${a.name}`).toBe(false);
      expect(['href', 'title', 'align', 'start', 'target', 'rel'], `${n.tagName} ${a.name}`).toContain(a.name);
      if (a.name === 'href') expect(a.value).toMatch(/^(https?:|mailto:|#|\/)/i);
    }
  }
}

describe('renderMarkdown', () => {
  it('renders the Markdown agents write', () => {
    const el = mount('# Plan\n\n**bold** and `code`\n\n```go\nfmt.Println("<hi>")\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n[docs](https://example.com/x)');
    expect(el.querySelector('h1')?.textContent).toBe('Plan');
    expect(el.querySelector('strong')?.textContent).toBe('bold');
    expect(el.querySelector('pre code')?.textContent).toContain('fmt.Println("<hi>")');
    expect(el.querySelectorAll('table td').length).toBe(2);
    expect(el.querySelectorAll('li').length).toBe(2);
    const a = el.querySelector('a')!;
    expect(a.getAttribute('href')).toBe('https://example.com/x');
    expect(a.getAttribute('target')).toBe('_blank');
    expect(a.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('keeps line breaks of plain text', () => {
    expect(mount('line one\nline two').querySelectorAll('br').length).toBe(1);
  });

  it('shows raw HTML as text', () => {
    const el = mount('<b>hi</b> there');
    expect(el.querySelector('b')).toBeNull();
    expect(el.textContent).toContain('<b>hi</b>');
  });

  const payloads: [string, string][] = [
    ['script tag', '<script>window.__xss = 1</script>'],
    ['script block', 'text\n\n<script>\nwindow.__xss = 1\n</script>\n'],
    ['img onerror', '<img src=x onerror="window.__xss=1">'],
    ['markdown image with javascript:', '![x](javascript:alert(1))'],
    ['markdown image onerror', '![x" onerror="alert(1)](x)'],
    ['javascript: link', '[click](javascript:alert(1))'],
    ['javascript: link with entities', '[click](jav&#x09;ascript:alert(1))'],
    ['JavaScript: mixed case', '[click](JaVaScRiPt:alert(1))'],
    ['vbscript: link', '[click](vbscript:msgbox(1))'],
    ['data: link', '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
    ['data: image', '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)'],
    ['autolink javascript:', '<javascript:alert(1)>'],
    ['svg onload', '<svg onload=alert(1)><circle r=1 /></svg>'],
    ['svg in a block', '<svg>\n<script>alert(1)</script>\n</svg>'],
    ['iframe', '<iframe src="https://evil.example"></iframe>'],
    ['iframe srcdoc', '<iframe srcdoc="<script>alert(1)</script>"></iframe>'],
    ['link title breakout', '[x](https://a.example "a\\" onmouseover=\\"alert(1)")'],
    ['style tag', '<style>body{display:none}</style>'],
    ['form', '<form action="https://evil.example"><button>go</button></form>'],
    ['math', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>'],
    ['object', '<object data="javascript:alert(1)"></object>'],
    ['a with onclick', '<a href="https://a.example" onclick="alert(1)">x</a>'],
    ['reference link javascript:', '[x][1]\n\n[1]: javascript:alert(1)'],
  ];
  for (const [name, md] of payloads) {
    it(`makes ${name} inert`, () => {
      const el = mount(md);
      expectInert(el);
      expect((window as unknown as { __xss?: number }).__xss).toBeUndefined();
    });
  }
});
