import { describe, it, expect } from 'vitest';
import { htmlToText, kindOf, readDocument } from './knowledge';

describe('knowledge files', () => {
  it('keeps the visible text of HTML with its headings as Markdown', () => {
    const t = htmlToText('<html><head><title>x</title><style>p{}</style></head><body><h1>Backups</h1><p>Run  <b>agentdesk backup</b>\nnightly.</p><script>evil()</script><h2>Restore</h2><ul><li>Stop it</li><li>Copy</li></ul></body></html>');
    expect(t).toBe('# Backups\n\nRun agentdesk backup nightly.\n\n## Restore\n\nStop it\n\nCopy');
  });

  it('reads txt and md as they are, refuses PDFs with what to do instead', async () => {
    expect(kindOf('a.MD')).toBe('text');
    expect(await readDocument(new File(['# Hi\n\nthere'], 'a.md'))).toBe('# Hi\n\nthere');
    await expect(readDocument(new File(['%PDF'], 'a.pdf'))).rejects.toThrow(/data token/);
    await expect(readDocument(new File(['x'.repeat(1 << 20)], 'big.txt'))).rejects.toThrow(/1 MiB/);
  });
});
