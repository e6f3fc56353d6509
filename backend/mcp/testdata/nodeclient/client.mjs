// A real MCP client: the official TypeScript SDK (@modelcontextprotocol/sdk). The Go test
// (backend/mcp/nodeclient_test.go) runs it against a real agentdesk:
//
//   node client.mjs stdio   spawns AGENTDESK_BIN mcp, with the agent variables
//                           (SERVICE_PROJECT_ID, AGENT_NAME, SERVICE_API_TOKEN) and
//                           AGENTDESK_URL in its environment, as an MCP client config does
//   node client.mjs http    Streamable HTTP to AGENTDESK_URL/mcp with AGENTDESK_TOKEN
//
// It lists the tools, creates a task, asks QUESTION with ask_human and waits for the
// answer (the test answers over REST once the task waits), then reads the question's
// task as a resource. One JSON line per step on stdout: {"tools": [...]},
// {"created": task}, {"asking": question}, {"answered": result, "progress": n},
// {"resource": task}. Exits 0 when every step worked, 1 with the reason on stderr.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const mode = process.argv[2];
const env = process.env;
const print = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const fail = (err) => {
  console.error(err instanceof Error ? err.stack : String(err));
  process.exit(1);
};

function transport() {
  switch (mode) {
    case 'stdio': {
      const vars = ['AGENTDESK_URL', 'SERVICE_PROJECT_ID', 'AGENT_NAME', 'SERVICE_API_TOKEN'];
      return new StdioClientTransport({
        command: env.AGENTDESK_BIN,
        args: ['mcp'],
        // Only what a client config gives: the SDK's default environment plus the agent's.
        env: { ...getDefaultEnvironment(), ...Object.fromEntries(vars.map((v) => [v, env[v] ?? ''])) },
        stderr: 'inherit',
      });
    }
    case 'http':
      return new StreamableHTTPClientTransport(new URL('/mcp', env.AGENTDESK_URL), {
        requestInit: { headers: { Authorization: `Bearer ${env.AGENTDESK_TOKEN}` } },
      });
    default:
      throw new Error(`usage: node client.mjs stdio|http (got ${mode})`);
  }
}

// A tool result's structured content, or the failure's text as an error.
function structured(name, res) {
  if (res.isError) throw new Error(`${name}: isError: ${res.content.map((c) => c.text).join('')}`);
  return res.structuredContent;
}

async function main() {
  const client = new Client({ name: 'agentdesk-nodeclient', version: '1.0.0' });
  await client.connect(transport());

  const { tools } = await client.listTools();
  print({ tools: tools.map((t) => t.name).sort() });

  const created = await client.callTool({
    name: 'create_task',
    arguments: { summary: `Filed by the TypeScript SDK over ${mode}`, steps: ['read', 'write'] },
  });
  print({ created: structured('create_task', created) });

  print({ asking: env.QUESTION });
  let progress = 0;
  const asked = await client.callTool(
    { name: 'ask_human', arguments: { question: env.QUESTION, wait_seconds: 30 } },
    undefined,
    { onprogress: () => progress++, timeout: 60_000 },
  );
  const answer = structured('ask_human', asked);
  print({ answered: answer, progress });

  const read = await client.readResource({ uri: `agentdesk://tasks/${answer.task_id}` });
  print({ resource: JSON.parse(read.contents[0].text) });

  await client.close();
}

setTimeout(() => fail(new Error('timed out')), Number(env.TIMEOUT_MS || '60000')).unref();
main().then(() => process.exit(0), fail);
