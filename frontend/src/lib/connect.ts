// "Connect an agent" (Agents screen): the one command that starts the reference agent,
// its environment given inline, so that it works when pasted into any shell that has
// the agentdesk binary: no export, no config file, no second step. And the MCP clients'
// configurations for `agentdesk mcp`, filled in the same way.
import type { EnvVar } from './types';

/** Quotes v for a POSIX shell when it holds anything but safe characters. */
export function shellQuote(v: string): string {
  return /^[A-Za-z0-9_./:@-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** The variables agent run reads (agentrun.ConfigFromEnv); the name goes as --name. */
const RUN_VARS = ['AGENTDESK_URL', 'SERVICE_PROJECT_ID', 'SERVICE_API_TOKEN', 'SERVICE_NAMESPACE', 'AGENTDESK_VECTOR_SPACES'];

/**
 * The command line: VAR=value ... agentdesk agent run --name NAME. shown, if given,
 * replaces a value as displayed (masked secrets); the copied line uses the real ones.
 */
export function runCommand(env: EnvVar[], name: string, shown?: (v: EnvVar) => string): string {
  const vars = RUN_VARS.flatMap((n) => env.filter((v) => v.name === n && v.value !== ''));
  return [...vars.map((v) => `${v.name}=${shown ? shown(v) : shellQuote(v.value)}`), 'agentdesk agent run --name', shellQuote(name)].join(' ');
}

/**
 * "Connect an MCP client": each client's configuration for `agentdesk mcp`, the
 * environment of the agent given inline (docs/mcp.md shows the same snippets, and
 * connect.test.ts keeps the two equal).
 */
export interface MCPClient {
  id: string;
  name: string;
  /** where the snippet goes */
  where: string;
  text: string;
}

/** The variables agentdesk mcp reads for an agent (backend/cli/mcp.go), in this order. */
const MCP_VARS = ['SERVICE_PROJECT_ID', 'SERVICE_API_TOKEN', 'AGENT_NAME', 'AGENTDESK_URL'];

/** What a hidden secret shows instead of its value. */
export const MASKED = '•'.repeat(12);

/**
 * The snippets of every client. Values for which hide is true show as MASKED (a screen
 * share); the copied snippets are made without hide.
 */
export function mcpClients(env: EnvVar[], hide?: (v: EnvVar) => boolean): MCPClient[] {
  const vars = MCP_VARS.flatMap((n) => env.filter((v) => v.name === n && v.value !== ''));
  const value = (v: EnvVar) => (hide?.(v) ? MASKED : v.value);
  const shell = [
    'claude mcp add agentdesk \\',
    ...vars.map((v) => `  -e ${v.name}=${hide?.(v) ? MASKED : shellQuote(v.value)} \\`),
    '  -- agentdesk mcp',
  ].join('\n');
  // JSON.stringify's strings are also TOML basic strings (the same escapes).
  const toml = [
    '[mcp_servers.agentdesk]',
    'command = "agentdesk"',
    'args = ["mcp"]',
    `env = { ${vars.map((v) => `${v.name} = ${JSON.stringify(value(v))}`).join(', ')} }`,
  ].join('\n');
  const server = { command: 'agentdesk', args: ['mcp'], env: Object.fromEntries(vars.map((v) => [v.name, value(v)])) };
  const json = (config: object) => JSON.stringify(config, null, 2).replace(/\[\s+"mcp"\s+\]/, '["mcp"]');
  const mcpServers = json({ mcpServers: { agentdesk: server } });
  return [
    { id: 'claude-code', name: 'Claude Code', where: "Run it in your project's directory (add --scope user for every project).", text: shell },
    { id: 'claude-desktop', name: 'Claude Desktop', where: 'Settings → Developer → Edit Config opens claude_desktop_config.json: merge this in, then restart Claude Desktop.', text: mcpServers },
    { id: 'cursor', name: 'Cursor', where: '~/.cursor/mcp.json for every project, or .cursor/mcp.json in one.', text: mcpServers },
    { id: 'vscode', name: 'VS Code', where: '.vscode/mcp.json in the workspace; the tools are in agent mode.', text: json({ servers: { agentdesk: { type: 'stdio', ...server } } }) },
    { id: 'codex', name: 'Codex', where: '~/.codex/config.toml.', text: toml },
  ];
}
