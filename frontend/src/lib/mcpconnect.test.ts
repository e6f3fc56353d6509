import { describe, it, expect, beforeEach, vi } from 'vitest';
import { render, fireEvent, screen, cleanup } from '@testing-library/svelte';
import Agents from '../screens/Agents.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';

const DIGEST = 'f'.repeat(40);
const env = [
  { name: 'SERVICE_NAMESPACE', value: 'default' },
  { name: 'SERVICE_PROJECT_ID', value: 'prj_abc' },
  { name: 'SERVICE_TOKEN_SECRET', value: 's3cret' },
  { name: 'AGENT_NAME', value: 'claude' },
  { name: 'SERVICE_API_TOKEN', value: DIGEST },
  { name: 'AGENTDESK_URL', value: 'http://127.0.0.1:8080' },
];

describe('Agents: connect an MCP client', () => {
  let copied: string[];
  beforeEach(() => {
    cleanup();
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'prj_abc', scopes: ['task:read', 'task:write', 'admin'] } };
    app.agents = [{ id: 1, name: 'claude', skills: [], lastSeenAt: null }];
    app.tasksLoaded = true;
    fakeFetch((c) => {
      const q: string = c.body?.query ?? '';
      if (q.includes('agentEnv')) return { data: { agentEnv: env } };
      if (q.includes('vectorSpaces')) return { data: { vectorSpaces: [] } };
      return {};
    });
    copied = [];
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText: async (t: string) => void copied.push(t) } });
  });

  const snippet = () => screen.getByTestId('mcp-snippet').textContent ?? '';

  it("shows the selected agent's Claude Code command first, its token masked, and copies the real one", async () => {
    render(Agents);
    await screen.findByTestId('mcp-snippet');
    expect(screen.getByRole('tab', { name: 'Claude Code' }).getAttribute('aria-selected')).toBe('true');
    expect(snippet()).toMatch(/^claude mcp add agentdesk \\\n/);
    expect(snippet()).toContain('-e AGENT_NAME=claude');
    expect(snippet()).not.toContain(DIGEST);
    await fireEvent.click(screen.getByRole('button', { name: 'Copy snippet' }));
    expect(copied).toHaveLength(1);
    expect(copied[0]).toContain(`-e SERVICE_API_TOKEN=${DIGEST} \\`);
    expect(copied[0]).toMatch(/-- agentdesk mcp$/);
  });

  it('switches clients by click and by arrow key, each with where its snippet goes', async () => {
    render(Agents);
    await screen.findByTestId('mcp-snippet');
    await fireEvent.click(screen.getByRole('tab', { name: 'Codex' }));
    expect(screen.getByRole('tabpanel').textContent).toContain('~/.codex/config.toml');
    expect(snippet()).toMatch(/^\[mcp_servers\.agentdesk\]/);
    await fireEvent.keyDown(screen.getByRole('tab', { name: 'Codex' }), { key: 'ArrowRight' });
    // Past the last tab: back to the first.
    expect(screen.getByRole('tab', { name: 'Claude Code' }).getAttribute('aria-selected')).toBe('true');
    expect(document.activeElement?.textContent).toBe('Claude Code');
    await fireEvent.keyDown(screen.getByRole('tab', { name: 'Claude Code' }), { key: 'ArrowLeft' });
    expect(screen.getByRole('tab', { name: 'Codex' }).getAttribute('aria-selected')).toBe('true');
    await fireEvent.click(screen.getByRole('tab', { name: 'VS Code' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Show the secrets' }));
    const shown = JSON.parse(snippet());
    expect(shown.servers.agentdesk.env).toEqual({
      SERVICE_PROJECT_ID: 'prj_abc',
      SERVICE_API_TOKEN: DIGEST,
      AGENT_NAME: 'claude',
      AGENTDESK_URL: 'http://127.0.0.1:8080',
    });
  });
});
