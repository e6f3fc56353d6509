import { describe, it, expect } from 'vitest';
import { MASKED, mcpClients, runCommand, shellQuote } from './connect';
import mcpDoc from '../../../docs/mcp.md?raw';

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

describe('connect an MCP client', () => {
  const byId = (id: string, hide?: Parameters<typeof mcpClients>[1]) => mcpClients(env, hide).find((c) => c.id === id)!.text;

  it('has a snippet for each client the docs name, in that order', () => {
    expect(mcpClients(env).map((c) => c.name)).toEqual(['Claude Code', 'Claude Desktop', 'Cursor', 'VS Code', 'Codex']);
  });
  it('gives agentdesk mcp the agent and the server, and nothing else', () => {
    const desktop = JSON.parse(byId('claude-desktop'));
    expect(desktop).toEqual({
      mcpServers: {
        agentdesk: {
          command: 'agentdesk',
          args: ['mcp'],
          env: { SERVICE_PROJECT_ID: 'prj_abc', SERVICE_API_TOKEN: 'deadbeef', AGENT_NAME: 'worker', AGENTDESK_URL: 'http://127.0.0.1:8080' },
        },
      },
    });
    expect(JSON.parse(byId('cursor'))).toEqual(desktop);
    expect(JSON.parse(byId('vscode'))).toEqual({ servers: { agentdesk: { type: 'stdio', ...desktop.mcpServers.agentdesk } } });
    expect(byId('claude-code')).toBe(
      'claude mcp add agentdesk \\\n  -e SERVICE_PROJECT_ID=prj_abc \\\n  -e SERVICE_API_TOKEN=deadbeef \\\n  -e AGENT_NAME=worker \\\n' +
        '  -e AGENTDESK_URL=http://127.0.0.1:8080 \\\n  -- agentdesk mcp',
    );
    expect(byId('codex')).toBe(
      '[mcp_servers.agentdesk]\ncommand = "agentdesk"\nargs = ["mcp"]\n' +
        'env = { SERVICE_PROJECT_ID = "prj_abc", SERVICE_API_TOKEN = "deadbeef", AGENT_NAME = "worker", AGENTDESK_URL = "http://127.0.0.1:8080" }',
    );
  });
  it('quotes each value for its format', () => {
    const odd = env.map((v) => (v.name === 'AGENT_NAME' ? { ...v, value: `it's "odd"\\` } : v));
    const all = mcpClients(odd);
    const text = (id: string) => all.find((c) => c.id === id)!.text;
    expect(text('claude-code')).toContain(`-e AGENT_NAME='it'\\''s "odd"\\' \\`);
    expect(JSON.parse(text('vscode')).servers.agentdesk.env.AGENT_NAME).toBe(`it's "odd"\\`);
    expect(text('codex')).toContain(`AGENT_NAME = "it's \\"odd\\"\\\\"`);
  });
  it('shows masked secrets without changing what is copied', () => {
    const hidden = mcpClients(env, (v) => v.name === 'SERVICE_API_TOKEN');
    for (const c of hidden) {
      expect(c.text, c.name).not.toContain('deadbeef');
      expect(c.text, c.name).toContain(MASKED);
    }
    expect(byId('codex')).toContain('"deadbeef"');
  });
  it('leaves out a variable the environment lacks', () => {
    const noURL = env.filter((v) => v.name !== 'AGENTDESK_URL');
    for (const c of mcpClients(noURL)) expect(c.text, c.name).not.toContain('AGENTDESK_URL');
  });
  it('are the snippets of docs/mcp.md', () => {
    // The docs write placeholders and name each client's agent after the client.
    const docsEnv = (agent: string) => [
      { name: 'SERVICE_PROJECT_ID', value: 'prj_...' },
      { name: 'SERVICE_API_TOKEN', value: '...' },
      { name: 'AGENT_NAME', value: agent },
      { name: 'AGENTDESK_URL', value: 'http://127.0.0.1:8080' },
    ];
    const agentOf: Record<string, string> = { 'claude-code': 'claude', 'claude-desktop': 'claude', cursor: 'claude', vscode: 'copilot', codex: 'codex' };
    for (const [id, agent] of Object.entries(agentOf)) {
      const c = mcpClients(docsEnv(agent)).find((x) => x.id === id)!;
      expect(mcpDoc, `docs/mcp.md lacks the ${c.name} snippet:\n${c.text}`).toContain('\n' + c.text + '\n```');
    }
  });
});
