import { describe, it, expect } from 'vitest';
import { runCommand, shellQuote } from './connect';

const env = [
  { name: 'SERVICE_NAMESPACE', value: 'default' },
  { name: 'SERVICE_PROJECT_ID', value: 'prj_abc' },
  { name: 'SERVICE_TOKEN_SECRET', value: 's3cret' },
  { name: 'AGENT_NAME', value: 'worker' },
  { name: 'SERVICE_API_TOKEN', value: 'deadbeef' },
  { name: 'AGENTDESK_URL', value: 'http://127.0.0.1:8080' },
];

describe('connect an agent', () => {
  it('is one command with its environment inline', () => {
    expect(runCommand(env, 'worker')).toBe(
      'AGENTDESK_URL=http://127.0.0.1:8080 SERVICE_PROJECT_ID=prj_abc SERVICE_API_TOKEN=deadbeef SERVICE_NAMESPACE=default agentdesk agent run --name worker',
    );
  });
  it('quotes what the shell would split or expand', () => {
    expect(shellQuote("it's $HOME")).toBe(`'it'\\''s $HOME'`);
    expect(shellQuote('')).toBe("''");
    expect(runCommand(env, 'my agent')).toMatch(/--name 'my agent'$/);
  });
  it('shows masked values without changing what is copied', () => {
    const shown = runCommand(env, 'worker', (v) => (v.name === 'SERVICE_API_TOKEN' ? '••••' : v.value));
    expect(shown).toContain('SERVICE_API_TOKEN=•••• ');
    expect(runCommand(env, 'worker')).toContain('SERVICE_API_TOKEN=deadbeef ');
  });
});
