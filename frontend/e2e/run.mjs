// End-to-end tests of the web UI: a real `agentdesk --serve` on a temporary data
// directory and a free port, the reference agent as a child process, and Debian's
// chromium driven by playwright-core. Build first: `npm run build`, then
// `CGO_ENABLED=0 go build -o bin/agentdesk .` at the repository root.
// Usage: node e2e/run.mjs [filter]   (AGENTDESK_BIN overrides the binary)
// AGENTDESK_E2E_DATA=DIR runs the server on an existing data directory (kept afterwards)
// instead of a new one; one seeded by `go run ./backend/bench -scale N -scale-seed DIR`
// also runs the board test of that big project (`make bench-ui-scale`).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { createHmac } from 'node:crypto';
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
function start(args, env = {}, cmd = bin) {
  const p = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
async function waitHealthy(base, p) {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(base + '/healthz')).ok) return;
    } catch {}
    if (i > 100) throw new Error('the server did not start:\n' + p.log.join(''));
    await new Promise((r) => setTimeout(r, 100));
  }
}

// A minimal SMTP receiver for the email test: it takes every message (no sign-in) and
// keeps it, quoted-printable decoded, for the test to read.
const mails = [];
const smtpReceiver = createServer((sock) => {
  sock.setEncoding('utf8');
  let buf = '';
  let data = null; // the message's lines while in DATA
  let rcpt = '';
  const say = (line) => sock.write(line + '\r\n');
  say('220 e2e ESMTP');
  sock.on('data', (chunk) => {
    buf += chunk;
    for (let i; (i = buf.indexOf('\r\n')) >= 0; ) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (data) {
        if (line !== '.') data.push(line.startsWith('..') ? line.slice(1) : line);
        else {
          const raw = data.join('\n');
          const body = raw.slice(raw.indexOf('\n\n') + 2).replace(/=\n/g, '')
            .replace(/(=[0-9A-F]{2})+/g, (m) => Buffer.from(m.replace(/=/g, ''), 'hex').toString('utf8'));
          mails.push({ to: rcpt, raw, body });
          data = null;
          say('250 OK');
        }
        continue;
      }
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'RCPT') rcpt = /<(.*)>/.exec(line)?.[1] ?? '';
      if (verb === 'DATA') {
        data = [];
        say('354 go on');
      } else if (verb === 'QUIT') {
        say('221 bye');
        sock.end();
      } else say('250 OK'); // EHLO, MAIL, RCPT, RSET, NOOP
    }
  });
});
await new Promise((ok) => smtpReceiver.listen(0, '127.0.0.1', ok));
smtpReceiver.unref();

const externalData = process.env.AGENTDESK_E2E_DATA;
const data = externalData ?? mkdtempSync(join(tmpdir(), 'agentdesk-e2e-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
// --webhooks-allow-private: the webhook test's receiver listens on loopback. --smtp-url:
// questions are emailed to smtpReceiver.
const server = start(['--serve', '--addr', `127.0.0.1:${port}`, '--data', data, '--webhooks-allow-private',
  '--smtp-url', `smtp://127.0.0.1:${smtpReceiver.address().port}`, '--smtp-from', 'agentdesk@example.com']);
for (let i = 0; ; i++) {
  try {
    if ((await fetch(url + '/healthz')).ok) break;
  } catch {}
  if (i > 100) throw new Error('the server did not start:\n' + server.log.join(''));
  await new Promise((r) => setTimeout(r, 100));
}

const project = JSON.parse(cli(['project', 'list', '--data', data]).split('\n')[0]).id;
const token = cli(['token', 'create', '--project', project, '--name', 'ui', '--data', data, '--scopes', 'task:read,task:write,messaging:read,messaging:write,admin']);
let agent;
try {
  agent = JSON.parse(cli(['agent', 'create', '--project', project, '--name', 'worker', '--data', data]));
} catch (e) {
  if (!externalData) throw e; // a directory run before has its worker already
}
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


async function gql(query, variables) {
  const res = await fetch(url + '/graphql', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new Error(`graphql: ${body.errors[0].message}`);
  return body.data;
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

// Uncaught exceptions of the pages of the flow running now: any fails the flow (the
// runner below checks after each flow), even when the screen looked right.
const pageErrors = [];

async function newPage(scheme = 'light') {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: scheme });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => {
    console.error('  page error:', e.message);
    pageErrors.push(e.stack ?? e.message);
  });
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
  expect((await page.title()) === '(1) agentdesk', `title with a question waiting: ${await page.title()}`);
  await card.getByText('Which day works?').waitFor();
  await page.screenshot({ path: join(shots, 'board-waiting.png') });
  await expectAccessible(page, 'the board with a waiting card');
  await page.getByRole('link', { name: /Inbox/ }).click();
  const item = page.getByTestId('inbox-item').filter({ hasText: 'Plan the launch' });
  await item.getByText('Which day works?').waitFor();
  await page.screenshot({ path: join(shots, 'inbox.png') });
  await expectAccessible(page, 'the inbox with a question');
  await item.getByTestId('reply').fill('Thursday');
  await item.getByTestId('reply').press('Control+Enter');
  await page.getByTestId('inbox-empty').waitFor({ timeout: 10000 });
  await page.getByRole('link', { name: /Board/ }).click();
  await page.locator('[data-column="Done"] [data-task-id]', { hasText: 'Plan the launch' }).waitFor({ timeout: 10000 });
  await page.locator('[data-column="Done"] [data-task-id]', { hasText: 'Plan the launch' }).getByText('3/3').waitFor();
  await page.locator('[data-column="Done"] [data-task-id]', { hasText: 'Plan the launch' }).click();
  await page.getByRole('dialog', { name: 'Task details' }).getByText('Thursday').first().waitFor();
  await page.screenshot({ path: join(shots, 'task-detail.png') });
  await expectAccessible(page, 'a finished task with its thread');
  await page.keyboard.press('Escape');
  await page.context().close();
});

test('questions (issue 40): options answered by a button at 390 px; a form refuses a missing required field, then is answered', async () => {
  const ask = async (summary, question) => {
    const t = await rest('POST', '/api/tasks', { summary });
    return rest('PUT', `/api/tasks/${t.id}/status`, { status: 'Waiting', waiting_details: summary + '?', ...question });
  };
  const at = new Date(Date.now() + 3600_000).toISOString();
  const choice = await ask('Ship the release', { waiting_options: ['Approve', 'Reject'], waiting_expires_at: at, waiting_on_expiry: 'default', waiting_default: 'Reject' });
  const form = await ask('Book the trip', {
    waiting_schema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Traveller' },
        seats: { type: 'integer', title: 'Seats', minimum: 1 },
        class: { type: 'string', title: 'Class', enum: ['economy', 'business'] },
        on: { type: 'string', title: 'Date', format: 'date' },
        window: { type: 'boolean', title: 'Window seat' },
      },
      required: ['name', 'seats'],
    },
  });
  const page = await newPage();
  await signIn(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(url + '/inbox');
  const item = page.getByTestId('inbox-item').filter({ hasText: 'Ship the release' });
  await item.getByTestId('deadline').getByText(/Answer within .*; then the answer is “Reject”/).waitFor();
  await item.getByRole('button', { name: 'Approve' }).waitFor();
  const problems = await checkScreen(page, 'questions-inbox', 390); // no sideways scrolling, no serious axe violation
  expect(problems.length === 0, problems.join('\n'));
  // By keyboard: Tab to the button, Enter presses it.
  await item.getByRole('button', { name: 'Approve' }).focus();
  await page.keyboard.press('Enter');
  for (let i = 0; i < 100 && (await rest('GET', `/api/tasks/${choice.id}`)).status === 'Waiting'; i++) await new Promise((r) => setTimeout(r, 100));
  const answered = await rest('GET', `/api/tasks/${choice.id}`);
  const entry = answered.conversation.at(-1);
  expect(answered.status !== 'Waiting' && entry.content === 'Approve' && entry.question === 'Ship the release?', `answered by a button: ${JSON.stringify(answered)}`);

  const formItem = page.getByTestId('inbox-item').filter({ hasText: 'Book the trip' });
  await formItem.getByLabel('Traveller').fill('Ada');
  await formItem.getByRole('button', { name: 'Send answer' }).click();
  await formItem.getByTestId('form-error').getByText('seats is required').waitFor();
  expect((await rest('GET', `/api/tasks/${form.id}`)).status === 'Waiting', 'a form without its required field was taken');
  expect(await formItem.getByLabel('Seats').evaluate((el) => el === document.activeElement), 'the refused field has the focus');
  await page.screenshot({ path: join(shots, 'questions-form-refused-390.png'), fullPage: true });
  await page.keyboard.type('2');
  await formItem.getByLabel('Class').selectOption('business');
  await formItem.getByLabel('Date').fill('2026-12-24');
  await formItem.getByLabel('Window seat').check();
  await formItem.getByRole('button', { name: 'Send answer' }).click();
  for (let i = 0; i < 100 && (await rest('GET', `/api/tasks/${form.id}`)).status === 'Waiting'; i++) await new Promise((r) => setTimeout(r, 100));
  await page.screenshot({ path: join(shots, 'questions-form-answered-390.png'), fullPage: true });
  const filled = (await rest('GET', `/api/tasks/${form.id}`)).conversation.at(-1);
  expect(filled, `the form was not answered: ${await formItem.textContent().catch(() => '')}`);
  expect(JSON.stringify(filled.data) === JSON.stringify({ class: 'business', name: 'Ada', on: '2026-12-24', seats: 2, window: true }), `the form's data: ${JSON.stringify(filled)}`);
  expect(filled.content === 'Traveller: Ada\nSeats: 2\nClass: business\nDate: 2026-12-24\nWindow seat: yes', `the form's text: ${JSON.stringify(filled.content)}`);
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
  await expectAccessible(page, 'a conversation with reactions');
  await page.context().close();
});

test('unread: the list counts another person\'s messages, the thread marks where they start, and seeing its end reads them (at 1280 and 390 px)', async () => {
  // Another person: a token nobody made has its own read marker.
  const other = cli(['token', 'create', '--project', project, '--name', 'colleague', '--data', data, '--scopes', 'messaging:read,messaging:write']);
  const as = async (tok, method, path, body) => {
    const res = await fetch(url + path, { method, headers: { Authorization: 'Bearer ' + tok, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
  const convs = `/api/projects/${project}/conversations`;
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const unread = await as(other, 'POST', convs, { name: `unread-${width}`, message: 'First, read already' });
    const [first] = await as(other, 'GET', `${convs}/${unread.id}/messages`);
    await rest('PUT', `${convs}/${unread.id}/read`, { lastReadMessageId: first.id }); // the viewer read the first message on another device
    await as(other, 'POST', `${convs}/${unread.id}/messages`, { message: 'Second: new to you' });
    await as(other, 'POST', `${convs}/${unread.id}/messages`, { message: 'Third: new too' });
    await as(other, 'POST', convs, { name: `later-${width}`, message: 'Opened first, as the newest' });

    const ctx = await browser.newContext({ viewport: { width, height } });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
    await page.goto(url + '/');
    await page.getByLabel('Platform token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('conn').getByText('Live').waitFor({ state: 'attached' }); // hidden on a phone
    await page.goto(url + '/conversations');
    const row = page.getByRole('link', { name: new RegExp(`unread-${width}`) });
    await row.getByTestId('unread').filter({ hasText: '2' }).waitFor();
    await page.screenshot({ path: join(shots, `unread-list-${width}.png`) });
    await row.click();
    const line = page.getByTestId('new-line');
    await line.waitFor();
    const next = await line.evaluate((el) => el.nextElementSibling?.textContent ?? '');
    expect(next.includes('Second: new to you'), `the New line comes before: ${next}`);
    await page.screenshot({ path: join(shots, `unread-thread-${width}.png`) });
    await row.getByTestId('unread').waitFor({ state: 'detached' });
    // The marker is the person's: the REST token (the same person) sees it read.
    for (let i = 0; ; i++) {
      const c = (await rest('GET', convs)).find((x) => x.id === unread.id);
      if (c.unread === 0) break;
      if (i > 50) throw new Error(`still unread on the server: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await expectAccessible(page, `unread counts and the New line at ${width} px`);
    await ctx.close();
  }
});

test('mentions: "@wo" suggests the worker, the message highlights it and the worker replies; the Inbox lists the mentions of the viewer (at 1280 and 390 px)', async () => {
  // Another person: a token nobody made (like the UI's, the local owner's, whom the project shows as "owner").
  const colleague = cli(['token', 'create', '--project', project, '--name', 'teammate', '--data', data, '--scopes', 'messaging:read,messaging:write']);
  const convs = `/api/projects/${project}/conversations`;
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const conv = await rest('POST', convs, { name: `mentions-${width}`, message: 'Who can look at the logs?' });
    const ctx = await browser.newContext({ viewport: { width, height } });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
    await page.goto(url + '/');
    await page.getByLabel('Platform token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('conn').getByText('Live').waitFor({ state: 'attached' }); // hidden on a phone
    await page.goto(url + `/conversations/${conv.id}`);
    await page.getByTestId('message').filter({ hasText: 'Who can look at the logs?' }).waitFor();

    const composer = page.getByTestId('composer');
    await composer.click();
    await composer.pressSequentially('Can you check them, @wo');
    const option = page.getByTestId('mention-option').filter({ hasText: 'worker' });
    await option.waitFor();
    await page.screenshot({ path: join(shots, `mention-suggest-${width}.png`) });
    await option.click();
    await composer.pressSequentially('please?');
    expect((await composer.inputValue()) === 'Can you check them, @worker please?', `the composer holds: ${await composer.inputValue()}`);
    await composer.press('Control+Enter');
    const sent = page.getByTestId('message').filter({ hasText: 'Can you check them' });
    await sent.locator('.mention', { hasText: '@worker' }).waitFor();
    // The reference agent hears of it on its event stream and answers in the conversation.
    await page.getByTestId('message').filter({ hasText: 'worker here' }).waitFor({ timeout: 15000 });
    await page.screenshot({ path: join(shots, `mention-thread-${width}.png`) });

    // Mentioned by someone else: the Inbox's Mentions list shows it, live.
    await page.goto(url + '/inbox');
    await page.getByRole('heading', { name: 'Mentions' }).waitFor();
    const res = await fetch(url + `${convs}/${conv.id}/messages`, {
      method: 'POST', headers: { Authorization: 'Bearer ' + colleague, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: `@owner, the logs at ${width} px are clean; @nobody is plain text` }),
    });
    if (!res.ok) throw new Error(`post a mention: ${res.status} ${await res.text()}`);
    const item = page.getByTestId('mention-item').filter({ hasText: `the logs at ${width} px are clean` });
    await item.locator('.mention', { hasText: '@owner' }).waitFor();
    expect((await item.locator('.mention').count()) === 1, '@nobody is not highlighted');
    await page.screenshot({ path: join(shots, `inbox-mentions-${width}.png`) });
    await expectAccessible(page, `the Inbox's mentions at ${width} px`);
    await item.getByRole('link').click();
    await page.waitForURL(url + `/conversations/${conv.id}`);
    await ctx.close();
  }
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
  await expectAccessible(page, 'tokens with a value shown');
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
  // A data token, made by an admin here, works on the vector endpoints; it expires in 30 days.
  await page.getByRole('radio', { name: /Data/ }).check();
  await page.getByLabel('Name').fill('kb-loader');
  await page.getByLabel('Expires').selectOption({ label: 'in 30 days' });
  await page.getByRole('button', { name: 'Create token' }).click();
  const dataValue = await page.getByTestId('token-value').inputValue();
  const spaces = await fetch(url + '/api/vector/spaces', { headers: { Authorization: 'Bearer ' + dataValue } });
  expect(spaces.status === 200, `data token on /api/vector/spaces: ${spaces.status}`);
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await expectText(page.getByTestId('token-row').filter({ hasText: 'kb-loader' }).getByTestId('token-expiry'), 'expires in 30 d');
  await page.getByLabel('Show revoked').check();
  await page.getByTestId('token-row').filter({ hasText: 'ci-pipeline' }).waitFor();
  await expectAccessible(page, 'tokens with revoked ones shown');
  await page.screenshot({ path: join(shots, 'tokens.png') });
  await page.context().close();
});

test('markdown: details and thread render, with raw HTML and script links inert', async () => {
  const page = await newPage();
  await signIn(page);
  const details = [
    '## Notes', '', '**Bold** and `code`, [docs](https://example.com/docs)', '',
    '| a | b |', '|---|---|', '| 1 | 2 |', '',
    '```', 'go build ./...', '```', '',
    '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>', '',
    '[bad](javascript:window.__xss=3) ![pic](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)',
  ].join('\n');
  const t = await rest('POST', '/api/tasks', { summary: 'Markdown task', details });
  await page.goto(url + '/board/' + t.id);
  const md = page.getByRole('dialog', { name: 'Task details' }).getByTestId('task-details');
  await md.locator('h2', { hasText: 'Notes' }).waitFor();
  expect((await md.locator('table td').count()) === 2, 'no table');
  expect((await md.locator('pre code').textContent()).includes('go build'), 'no code block');
  const link = md.getByRole('link', { name: 'docs' });
  expect((await link.getAttribute('target')) === '_blank' && (await link.getAttribute('rel')) === 'noopener noreferrer', 'link attributes');
  expect((await md.locator('img, script, svg, [onerror]').count()) === 0, 'raw HTML was rendered');
  expect((await md.locator('a[href^="javascript:"], a[href^="data:"]').count()) === 0, 'a script or data link kept its href');
  expect((await md.textContent()).includes('<script>'), 'raw HTML is not shown as text');
  await md.getByText('bad').click();
  expect((await page.evaluate(() => window.__xss)) === undefined, 'a payload ran');
  await page.screenshot({ path: join(shots, 'task-markdown.png') });
  await page.context().close();
});

// Every screen at a laptop's and a phone's size: no horizontal overflow (the page never
// scrolls sideways), and axe-core finds no serious or critical accessibility problem.
const axeSource = readFileSync(join(here, '../node_modules/axe-core/axe.min.js'), 'utf8');
async function checkScreen(page, name, width) {
  await page.locator('h1, h2').first().waitFor();
  await page.waitForLoadState('networkidle');
  const overflow = await page.evaluate(() => document.scrollingElement.scrollWidth - innerWidth);
  await page.screenshot({ path: join(shots, `screen-${name}-${width}.png`), fullPage: true });
  const problems = [];
  if (overflow > 0) problems.push(`${name} at ${width} px: ${overflow} px of horizontal overflow`);
  for (const f of await axeProblems(page)) problems.push(`${name} at ${width} px: ${f}`);
  return problems;
}

/** axe-core's serious and critical violations on the page as it is now. */
async function axeProblems(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help}; ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
}

/** Fails the flow on any serious or critical axe-core violation of the page as it is now. */
async function expectAccessible(page, where) {
  const found = await axeProblems(page);
  expect(found.length === 0, `axe-core on ${where}:\n${found.join('\n')}`);
}

test('every screen at 1280 and 390 px wide: no sideways scrolling, no serious axe violations', async () => {
  const t = await rest('POST', '/api/tasks', { summary: 'A task with a rather long summary that has to wrap on a phone', details: 'Some **details**.', steps: [{ title: 'First step' }, { title: 'Second step?' }] });
  const conv = (await gql('mutation { createConversation(name: "phone-check", message: "Hello from a phone check") { id } }')).createConversation;
  const screens = [
    ['board', '/board'], ['task', `/board/${t.id}`], ['inbox', '/inbox'], ['conversation', `/conversations/${conv.id}`],
    ['agents', '/agents'], ['jobs', '/jobs'], ['knowledge', '/knowledge'], ['usage', '/usage'], ['activity', '/activity'],
    ['tokens', '/tokens'], ['webhooks', '/webhooks'], ['members', '/members'], ['settings', '/settings'],
  ];
  const problems = [];
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const ctx = await browser.newContext({ viewport: { width, height } });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
    await page.goto(url + '/');
    problems.push(...(await checkScreen(page, 'signin', width)));
    await page.getByLabel('Platform token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('conn').getByText('Live').waitFor({ state: 'attached' });
    for (const [name, path] of screens) {
      await page.goto(url + path);
      problems.push(...(await checkScreen(page, name, width)));
    }
    if (width < 768) {
      // The menu opens over the page and takes one to another screen.
      await page.goto(url + '/board');
      await page.getByTestId('menu-button').click();
      await page.getByRole('link', { name: 'Agents' }).waitFor();
      problems.push(...(await checkScreen(page, 'menu', width)));
      await page.getByRole('link', { name: 'Agents' }).click();
      await page.getByRole('link', { name: 'Agents' }).waitFor({ state: 'hidden' });
      // The board: one column at a time, picked with tabs.
      await page.goto(url + '/board');
      await page.getByRole('tab', { name: /Backlog/ }).click();
      await page.locator('[data-column="Backlog"] [data-task-id]').first().waitFor();
      expect(!(await page.locator('[data-column="Todo"]').isVisible()), 'the Todo column shows beside Backlog');
      await page.getByRole('button', { name: /New task/ }).click();
      await page.getByRole('textbox', { name: 'Summary' }).waitFor();
      problems.push(...(await checkScreen(page, 'new-task', width)));
    }
    await ctx.close();
  }
  expect(problems.length === 0, '\n' + problems.join('\n'));
});

test('the first hour (issue 43): links, phone counts, order, limits, touch, scopes, activity', async () => {
  // A first visit asks nothing it knows will be refused: no 401 from /api/me.
  const refused = [];
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  let page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
  page.on('response', (r) => r.status() === 401 && refused.push(r.url()));
  await page.goto(url + '/');
  await page.getByLabel('Platform token').waitFor();
  expect(refused.length === 0, `a first visit was refused: ${refused.join(', ')}`);

  // A column holding more than a page: 55 tasks in Backlog besides the others.
  const before = await rest('GET', '/api/tasks/counts');
  for (let i = 0; i < 55; i++) await rest('POST', '/api/tasks', { summary: `Backlog filler ${i}` });
  const backlog = before.Backlog + 55;

  await page.getByLabel('Platform token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor();

  // Cards are links: Ctrl+click and middle-click open the task in a new tab.
  const card = page.locator('[data-column="Backlog"] a[data-task-id]').first();
  const id = await card.getAttribute('data-task-id');
  expect((await card.getAttribute('href')) === `/tasks/${id}`, `card href: ${await card.getAttribute('href')}`);
  const board = page.url();
  const [tab] = await Promise.all([ctx.waitForEvent('page'), card.click({ button: 'middle' })]);
  await tab.waitForLoadState('domcontentloaded');
  expect(new URL(tab.url()).pathname === `/tasks/${id}`, `middle-click opened ${tab.url()}`);
  // Signed in by the session the token started (POST /api/session): the task opens, no token asked.
  await tab.getByRole('dialog', { name: 'Task details' }).waitFor();
  await tab.getByTestId('conn').getByText('Live').waitFor();
  expect(await tab.evaluate(() => sessionStorage.getItem('agentdesk.token') === null), 'the new tab was given a token');
  await tab.close();
  expect(page.url() === board, `a middle-click moved the page to ${page.url()}`);

  // A 1,000-character summary: the pane's controls stay in view.
  const long = await rest('POST', '/api/tasks', { summary: 'Long '.repeat(200).trim() });
  await page.goto(url + `/tasks/${long.id}`);
  const status = page.locator('#d-status');
  await status.waitFor();
  await page.getByTestId('conn').getByText('Live').waitFor({ state: 'attached' }); // the board loaded again: the pane keeps its task
  const box = await status.boundingBox({ timeout: 5000 });
  expect(box && box.y + box.height < 800, `the Status control is out of view at y=${box?.y}`);
  await page.screenshot({ path: join(shots, 'first-hour-long-title-1280.png') });

  // Members without a sign-in provider: nobody can sign in with an email yet.
  await page.goto(url + '/members');
  await page.getByTestId('no-provider').waitFor();
  await page.screenshot({ path: join(shots, 'first-hour-members-1280.png') });

  // A comment shows in Activity as a comment.
  await rest('POST', `/api/tasks/${long.id}/comments`, { content: 'Looks good to me' });
  await page.goto(url + '/activity');
  await page.getByTestId('activity-change').filter({ hasText: 'comment "Looks good to me"' }).first().waitFor();
  await ctx.close();

  // A phone: touch screen, 390 px.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  page = await phone.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
  await page.goto(url + '/');
  await page.getByLabel('Platform token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor({ state: 'attached' });
  expect(await page.evaluate(() => matchMedia('(hover: none)').matches), 'the phone is not a touch screen');
  // The chip counts the column, not the page loaded.
  const inBacklog = (await rest('GET', '/api/tasks/counts')).Backlog;
  expect(inBacklog > 50 && inBacklog >= backlog, `Backlog holds ${inBacklog}`);
  await expectText(page.getByRole('tab', { name: /Backlog/ }).locator('.badge'), String(inBacklog));
  // No keyboard hints on a touch screen.
  expect(!(await page.locator('.head kbd').first().isVisible()), 'the New task key hint shows on a touch screen');

  // A new task on a busy column is scrolled to and marked; the toast links to it.
  await page.getByRole('tab', { name: /Backlog/ }).click();
  await page.getByRole('button', { name: /New task/ }).click();
  const summary = page.getByRole('textbox', { name: 'Summary' });
  await summary.fill('x'.repeat(1200));
  expect((await summary.inputValue()).length === 1200, 'the summary was cut');
  await expectText(page.getByTestId('summary-count'), '1,200 / 1,000: too long, shorten it (or put the rest in Details)');
  await page.screenshot({ path: join(shots, 'first-hour-too-long-390.png') });
  await summary.fill('Made on the phone');
  await page.getByLabel('Agent').selectOption(''); // Backlog, the busy column (the worker would finish it at once)
  await page.getByRole('button', { name: 'Create task' }).click();
  const link = page.getByTestId('toast-link');
  await link.waitFor();
  const made = (await link.textContent()).match(/#(\d+)/)[1];
  const mine = page.locator(`a[data-task-id="${made}"].highlighted`);
  await mine.waitFor();
  await page.waitForTimeout(800); // the layout settles (the board scrolls to it again then)
  const at = await mine.boundingBox();
  const toastTop = (await page.getByTestId('toast').first().boundingBox()).y;
  expect(at && at.y >= 0 && at.y + at.height <= toastTop, `the new task is not in view above the toast (y=${at?.y}, toast at ${toastTop})`);
  await page.screenshot({ path: join(shots, 'first-hour-created-390.png') });
  expect((await link.getAttribute('href')) === `/tasks/${made}`, 'the toast does not link to the task');

  // Newest first, remembered across a reload.
  await page.locator('[data-column="Backlog"] [data-testid="column-order"]').click();
  await expectText(page.locator('[data-column="Backlog"] [data-testid="column-order"]'), 'Newest ↓');
  await page.reload();
  await page.getByRole('tab', { name: /Backlog/ }).click();
  await expectText(page.locator('[data-column="Backlog"] [data-testid="column-order"]'), 'Newest ↓');
  expect((await page.locator('[data-column="Backlog"] a[data-task-id]').first().getAttribute('data-task-id')) === made, 'the newest task is not first');
  await page.screenshot({ path: join(shots, 'first-hour-newest-390.png') });

  // Tables keep their first column in view while they scroll sideways.
  for (const screen of ['tokens', 'agents', 'activity']) {
    await page.goto(url + '/' + screen);
    const first = page.locator('main table tbody tr td:first-child').first();
    await first.waitFor();
    expect((await first.evaluate((el) => getComputedStyle(el).position)) === 'sticky', `${screen}: the first column scrolls away`);
    await page.locator('main table').first().evaluate((el) => (el.scrollLeft = 200));
    const cell = await first.boundingBox();
    expect(cell && cell.x >= 0 && cell.x < 40, `${screen}: the first column left the screen (x=${cell?.x})`);
    await page.screenshot({ path: join(shots, `first-hour-${screen}-390.png`) });
  }

  // The usage chart's labels are legible on a phone.
  await page.goto(url + '/usage');
  await page.getByTestId('cost-chart').waitFor();
  const label = await page.locator('[data-testid="cost-chart"] text').first().evaluate((el) => el.getBoundingClientRect().height);
  expect(label >= 11, `the chart's labels are ${label} px tall`);
  await page.screenshot({ path: join(shots, 'first-hour-usage-390.png') });
  await phone.close();

  // A task:read token: Conversations says what it may not see instead of loading for good.
  const reader = cli(['token', 'create', '--project', project, '--name', 'reader', '--data', data, '--scopes', 'task:read']);
  const rctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await rctx.newPage();
  await page.goto(url + '/');
  await page.getByLabel('Platform token').fill(reader);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor();
  await page.goto(url + '/conversations');
  await expectText(page.getByTestId('missing-scope'), 'This screen needs the messaging:read scope, which your token lacks.');
  await rctx.close();
});

test('edit a task: summary, details and steps; a failed task retried', async () => {
  const page = await newPage();
  await signIn(page);
  const t = await rest('POST', '/api/tasks', { summary: 'Write the notes', details: 'rough', steps: [{ title: 'outline' }, { title: 'draft' }] });
  await rest('PUT', `/api/tasks/${t.id}/steps/0/status`, { status: 'completed' });
  await page.goto(url + '/board/' + t.id);
  const pane = page.getByRole('dialog', { name: 'Task details' });
  await pane.getByTestId('task-when').getByText(/Created just now/).waitFor();
  await pane.getByRole('button', { name: 'Edit' }).click();
  await pane.getByLabel('Summary').fill('Write the release notes');
  await pane.getByLabel(/Details/).fill('For **1.2**, see [the board](https://example.com/b).');
  await pane.getByLabel('Title of step 2').fill('first draft');
  await pane.getByRole('button', { name: 'Add a step' }).click();
  await pane.getByLabel('Title of step 3').fill('review');
  await pane.getByRole('button', { name: 'Save' }).click();
  await pane.getByRole('heading', { name: 'Write the release notes' }).waitFor();
  await pane.getByTestId('task-details').locator('strong', { hasText: '1.2' }).waitFor();
  await page.screenshot({ path: join(shots, 'task-edited.png') });
  const saved = await rest('GET', `/api/tasks/${t.id}`);
  expect(saved.summary === 'Write the release notes' && saved.steps.map((s) => s.title).join() === 'outline,first draft,review', `saved: ${JSON.stringify(saved)}`);
  expect(saved.steps[0].status === 'completed' && saved.steps[2].status === 'pending', 'step statuses');
  await page.keyboard.press('Escape');
  await page.locator('[data-task-id]', { hasText: 'Write the release notes' }).waitFor();

  const f = await rest('POST', '/api/tasks', { summary: 'Flaky import' });
  await rest('PUT', `/api/tasks/${f.id}/status`, { status: 'Failed' });
  await page.goto(url + '/board/' + f.id);
  await pane.getByTestId('task-failed').getByRole('button', { name: 'Retry' }).click();
  await page.locator('[data-column="Backlog"] [data-task-id]', { hasText: 'Flaky import' }).waitFor();
  expect((await rest('GET', `/api/tasks/${f.id}`)).status === 'Backlog', 'retry did not move the task');
  // The activity trail says what the edit and the retry changed.
  await page.goto(url + '/activity');
  await page.getByLabel('Object type').fill('task');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByTestId('activity-change').filter({ hasText: 'status Failed → Backlog' }).waitFor();
  await page.getByTestId('activity-change').filter({ hasText: 'summary "Write the notes" → "Write the release notes"' }).waitFor();
  await page.screenshot({ path: join(shots, 'activity-changes.png') });
  await page.context().close();
});

test('comments: the agent\'s question and failure in the thread, a comment on the failed task', async () => {
  const page = await newPage();
  await signIn(page);
  // An agent that is not running, driven by hand through the callback.
  const helper = JSON.parse(cli(['agent', 'create', '--project', project, '--name', 'helper', '--data', data]));
  const t = await rest('POST', '/api/tasks', { summary: 'Print the report', agent_id: helper.id });
  const callback = async (body) => {
    const res = await fetch(url + `/api/agent_callback/${t.id}`, {
      method: 'POST',
      headers: { 'X-Task-Authorization': agentEnv.SERVICE_API_TOKEN, 'X-Agent-Name': 'helper', 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: project, ...body }),
    });
    expect(res.ok, `callback: ${res.status} ${await res.text()}`);
  };
  await callback({ waiting_details: 'Which printer, **2F** or 3F?' });
  await rest('POST', `/api/tasks/${t.id}/respond`, { response: '2F' });
  await callback({ status: 'Failed', message: 'The agent failed: printer 2F is offline' });
  await page.goto(url + '/board/' + t.id);
  const pane = page.getByRole('dialog', { name: 'Task details' });
  const entries = pane.locator('.convo li');
  await entries.filter({ hasText: 'printer 2F is offline' }).waitFor();
  const who = await pane.getByTestId('convo-who').allTextContents();
  const texts = await entries.allTextContents();
  expect(texts.length === 3 && texts[0].includes('Which printer') && texts[1].includes('2F') && texts[2].includes('offline'), `thread: ${texts.join(' | ')}`);
  // The question is shown above its answer, from the answer (it is not a conversation entry).
  expect((await pane.getByTestId('convo-question').textContent()).includes('Asked by helper'), 'the question is not attributed to the agent');
  expect(who.length === 2 && who[1].startsWith('helper'), `authors: ${who.join(' | ')}`);
  await pane.getByLabel('Comment on task #' + t.id).fill('Plugged **2F** back in; retrying.');
  await pane.getByRole('button', { name: 'Comment' }).click();
  await entries.filter({ hasText: 'Plugged 2F back in' }).locator('strong').waitFor();
  const after = await rest('GET', `/api/tasks/${t.id}`);
  expect(after.status === 'Failed' && after.conversation.at(-1).content === 'Plugged **2F** back in; retrying.' && after.conversation.at(-1).author === 'ui',
    `after the comment: ${JSON.stringify(after)}`);
  await expectAccessible(page, 'a task thread with a comment box');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await pane.getByTestId('comment').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, `task-comments-${width}.png`) });
  }
  await page.context().close();
});

test('jumper: Ctrl+K finds a task, a conversation and a screen by name', async () => {
  const page = await newPage();
  await signIn(page);
  const t = await rest('POST', '/api/tasks', { summary: 'Renew the TLS certificate' });
  await page.locator('[data-task-id]', { hasText: 'Renew the TLS certificate' }).waitFor();
  await page.keyboard.press('Control+k');
  const jumper = page.getByTestId('jumper');
  await jumper.getByRole('combobox').fill('tls cert');
  await jumper.getByRole('option', { name: /Renew the TLS certificate/ }).waitFor();
  await expectAccessible(page, 'the jumper');
  await page.screenshot({ path: join(shots, 'jumper.png') });
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'Task details' }).getByRole('heading', { name: 'Renew the TLS certificate' }).waitFor();
  expect(new URL(page.url()).pathname === `/board/${t.id}`, `jumped to ${page.url()}`);
  await page.keyboard.press('Escape');
  // From inside a text field too, and to a screen.
  await page.getByTestId('jump-button').click();
  await jumper.getByRole('combobox').fill('sett');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Settings' }).waitFor();
  await page.context().close();
});

test('search: the board search box and Ctrl+K find a message by its words through GET /api/search, with a snippet, and open its conversation', async () => {
  const conv = await rest('POST', `/api/projects/${project}/conversations`,
    { name: 'Road works', message: 'Before Friday the zebra crossing on Main Street needs fresh paint, says the council.' });
  const page = await newPage();
  await signIn(page);
  // The board's search box: no task holds the words, the message is listed beside.
  await page.getByTestId('board-search').fill('zebra crossing');
  const beside = page.getByTestId('found-elsewhere').getByRole('link', { name: /Road works/ });
  await beside.waitFor();
  expect(await beside.getAttribute('href') === `/conversations/${conv.id}`, `the board's link: ${await beside.getAttribute('href')}`);
  await expectAccessible(page, 'the board search with messages found');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await page.screenshot({ path: join(shots, `search-board-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 844 });
  await page.getByTestId('board-search').fill('');
  await page.getByTestId('found-elsewhere').waitFor({ state: 'detached' });
  await page.keyboard.press('Control+k');
  const jumper = page.getByTestId('jumper');
  await jumper.getByRole('combobox').fill('zebra crossing');
  const found = jumper.getByRole('option', { name: /Road works/ });
  await found.waitFor();
  expect((await found.textContent()).includes('zebra crossing on Main Street'), `the snippet: ${await found.textContent()}`);
  expect(await found.getAttribute('href') === `/conversations/${conv.id}`, `the link: ${await found.getAttribute('href')}`);
  await expectAccessible(page, 'the jumper with search results');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await page.screenshot({ path: join(shots, `search-${width}.png`) });
  }
  await page.keyboard.press('Enter');
  await page.getByTestId('messages').getByText('zebra crossing').waitFor();
  expect(new URL(page.url()).pathname === `/conversations/${conv.id}`, `opened ${page.url()}`);
  await page.context().close();
});

test('undo: a move and a delete, each undone from its toast; a delete not undone reaches the server', async () => {
  const page = await newPage();
  await signIn(page);
  const t = await rest('POST', '/api/tasks', { summary: 'Undo me' });
  const card = page.locator('[data-task-id]', { hasText: 'Undo me' });
  await card.waitFor();
  await card.focus();
  await page.keyboard.press('Shift+ArrowRight');
  const moved = page.getByTestId('toast').filter({ hasText: `Moved #${t.id} to Todo.` });
  await moved.getByRole('button', { name: 'Undo' }).click();
  await page.locator('[data-column="Backlog"] [data-task-id]', { hasText: 'Undo me' }).waitFor();
  for (let i = 0; i < 50 && (await rest('GET', `/api/tasks/${t.id}`)).status !== 'Backlog'; i++) await new Promise((r) => setTimeout(r, 100));
  expect((await rest('GET', `/api/tasks/${t.id}`)).status === 'Backlog', 'the undone move did not reach the server');

  await card.click();
  await page.getByRole('dialog', { name: 'Task details' }).getByRole('button', { name: 'Delete task' }).click();
  await card.waitFor({ state: 'detached' });
  await page.getByTestId('toast').filter({ hasText: `Deleted #${t.id}` }).getByRole('button', { name: 'Undo' }).click();
  await card.waitFor();
  await card.click();
  await page.getByRole('dialog', { name: 'Task details' }).getByRole('button', { name: 'Delete task' }).click();
  await card.waitFor({ state: 'detached' });
  let status = 200;
  for (let i = 0; i < 100 && status !== 404; i++) {
    status = (await fetch(url + `/api/tasks/${t.id}`, { headers: { Authorization: 'Bearer ' + token } })).status;
    if (status !== 404) await new Promise((r) => setTimeout(r, 100));
  }
  expect(status === 404, `the delete did not reach the server: ${status}`);
  await page.context().close();
});

test('agents and settings screens', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByTestId('agent-env').getByText('AGENT_NAME=worker').waitFor();
  const runLine = await page.getByTestId('run-line').textContent();
  expect(runLine.startsWith(`AGENTDESK_URL=${url} SERVICE_PROJECT_ID=${project} SERVICE_API_TOKEN=•`) && runLine.endsWith(' agentdesk agent run --name worker'), `run line ${runLine}`);
  // The secret and the digest stay masked until asked for; Copy all still has them.
  const secret = agentEnv.SERVICE_TOKEN_SECRET;
  expect(secret && !(await page.locator('main').textContent()).includes(secret), 'the project secret is shown unasked');
  await page.getByTestId('show-secrets').click();
  await page.getByTestId('agent-env').getByText(secret).waitFor();
  await page.screenshot({ path: join(shots, 'agents.png') });
  await page.getByRole('link', { name: 'Settings' }).click();
  await expectText(page.getByTestId('data-dir'), data);
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export backup' }).click()]);
  expect(/^agentdesk-\d{4}-\d{2}-\d{2}\.db$/.test(dl.suggestedFilename()), `backup name ${dl.suggestedFilename()}`);
  await page.screenshot({ path: join(shots, 'settings.png') });
  await page.context().close();
});


test('onboarding: the sign-in card\'s command and Connect an agent\'s work when pasted', async () => {
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  const shell = (cmd, extra = {}) => ({ cmd, env: { ...process.env, PATH: `${dirname(bin)}:${process.env.PATH}`, AGENTDESK_DATA: data, ...extra } });
  const copied = async (scope) => {
    await scope.getByRole('button', { name: 'Copy command' }).click();
    return page.evaluate(() => navigator.clipboard.readText());
  };
  // The sign-in card: copy its command, run it in a shell on the server's machine (the
  // server's data directory), sign in with the token it prints.
  await page.goto(url + '/');
  const shown = await page.getByTestId('token-command').textContent();
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await page.screenshot({ path: join(shots, `signin-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const signInCmd = await copied(page.locator('form'));
  expect(signInCmd === shown, `copied ${signInCmd}, shown ${shown}`);
  const s1 = shell(signInCmd);
  const made = execFileSync('sh', ['-c', s1.cmd], { encoding: 'utf8', env: s1.env }).trim();
  expect(/^adk_[A-Za-z0-9]{32,}$/.test(made), `the pasted command printed ${made}`);
  await page.getByLabel('Platform token').fill(made);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor();
  // Connect an agent: register one, copy its command, paste it into a shell: the agent
  // runs and finishes a task given to it.
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByLabel('New agent name').fill('pasted');
  await page.getByRole('button', { name: 'Register agent' }).click();
  await expectText(page.locator('#env-agent option:checked'), 'pasted');
  const connect = page.getByRole('region', { name: 'Connect an agent' });
  await connect.getByTestId('run-line').getByText('--name pasted').waitFor();
  expect(!(await connect.getByTestId('run-line').textContent()).includes(agentEnv.SERVICE_API_TOKEN), 'the digest is shown unasked');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await connect.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, `connect-agent-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const runCmd = await copied(connect);
  expect(runCmd.endsWith(' agentdesk agent run --name pasted') && runCmd.includes(agentEnv.SERVICE_API_TOKEN), `copied ${runCmd}`);
  const s2 = shell(runCmd, { AGENTDESK_URL: '', SERVICE_PROJECT_ID: '', SERVICE_API_TOKEN: '', SERVICE_TOKEN_SECRET: '' });
  const agent = spawn('sh', ['-c', s2.cmd], { env: s2.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const agentLog = [];
  agent.stderr.on('data', (d) => agentLog.push(String(d)));
  try {
    const pastedId = (await gql('{ agents { id name } }')).agents.find((a) => a.name === 'pasted').id;
    const t = await rest('POST', '/api/tasks', { summary: 'Pasted agent works', steps: [{ title: 'Say hello' }], agent_id: pastedId });
    let status = '';
    for (let i = 0; i < 200 && status !== 'Done'; i++) {
      status = (await rest('GET', `/api/tasks/${t.id}`)).status;
      if (status !== 'Done') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status === 'Done', `the pasted agent did not finish its task (${status}):\n${agentLog.join('')}`);
  } finally {
    process.kill(-agent.pid, 'SIGTERM');
  }
  await page.context().close();
});

// mcpTools speaks MCP to a started `agentdesk mcp` over its stdin and stdout (JSON-RPC, one
// message a line): initialize, then tools/list; it returns the tools' names.
async function mcpTools(child) {
  const lines = [];
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) lines.push(JSON.parse(buf.slice(0, i)));
  });
  const stderr = [];
  child.stderr.on('data', (d) => stderr.push(String(d)));
  const answer = async (id) => {
    for (let i = 0; i < 100; i++) {
      const m = lines.find((l) => l.id === id);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`agentdesk mcp did not answer request ${id}: ${stderr.join('')}`);
  };
  const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } });
  const init = await answer(1);
  expect(init.result?.serverInfo, `initialize: ${JSON.stringify(init)}`);
  send({ method: 'notifications/initialized' });
  send({ id: 2, method: 'tools/list' });
  const list = await answer(2);
  return (list.result?.tools ?? []).map((t) => t.name).sort();
}

test('connect an MCP client: the copied Claude Code command and Claude Desktop config start agentdesk mcp as the agent', async () => {
  const page = await newPage();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  await signIn(page);
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.locator('#env-agent').selectOption('worker');
  const mcp = page.getByRole('region', { name: /connect an MCP client/ });
  const snippet = mcp.getByTestId('mcp-snippet');
  await snippet.getByText('claude mcp add agentdesk').waitFor();
  expect(!(await snippet.textContent()).includes(agentEnv.SERVICE_API_TOKEN), 'the digest is shown unasked');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await mcp.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, `connect-mcp-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  const copy = async () => {
    await mcp.getByRole('button', { name: 'Copy snippet' }).click();
    return page.evaluate(() => navigator.clipboard.readText());
  };
  // A shell with none of the agent's variables, and a data directory with no server
  // running on it: agentdesk mcp knows the agent and the server from the snippet alone.
  const bare = { ...process.env, AGENTDESK_URL: '', AGENTDESK_TOKEN: '', SERVICE_PROJECT_ID: '', SERVICE_API_TOKEN: '', SERVICE_TOKEN_SECRET: '', AGENT_NAME: '',
    AGENTDESK_DATA: mkdtempSync(join(tmpdir(), 'agentdesk-e2e-mcp-')) };
  const agentTools = ['ask_human', 'create_task', 'get_task', 'list_conversations', 'list_tasks', 'post_message', 'read_messages', 'update_task'];
  const fake = mkdtempSync(join(tmpdir(), 'agentdesk-e2e-claude-'));
  try {
    // Claude Code: the command pasted into a shell. `claude` here is a stand-in that does
    // what `claude mcp add NAME -e K=V ... -- CMD ARGS` has Claude Code do later: run CMD
    // with those variables.
    writeFileSync(join(fake, 'claude'), '#!/bin/sh\n[ "$1 $2" = "mcp add" ] || exit 2\nshift 3\nwhile [ "$1" = "-e" ]; do export "$2"; shift 2; done\n[ "$1" = "--" ] || exit 2\nshift\nexec "$@"\n', { mode: 0o755 });
    const command = await copy();
    expect(command.includes(`-e SERVICE_API_TOKEN=${agentEnv.SERVICE_API_TOKEN} \\`) && command.endsWith('-- agentdesk mcp'), `copied ${command}`);
    const code = spawn('sh', ['-c', command], { env: { ...bare, PATH: `${fake}:${dirname(bin)}:${process.env.PATH}` } });
    try {
      const tools = await mcpTools(code);
      expect(JSON.stringify(tools) === JSON.stringify(agentTools), `Claude Code's agentdesk mcp lists ${tools}`);
    } finally {
      code.kill();
    }

    // Claude Desktop: its config's command, arguments and environment, as Claude Desktop runs them.
    await mcp.getByRole('tab', { name: 'Claude Desktop' }).click();
    await mcp.getByText('claude_desktop_config.json').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await mcp.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'connect-mcp-json-390.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
    const config = JSON.parse(await copy()).mcpServers.agentdesk;
    const desktop = spawn(config.command, config.args, { env: { ...bare, PATH: `${dirname(bin)}:${process.env.PATH}`, ...config.env } });
    try {
      const tools = await mcpTools(desktop);
      expect(JSON.stringify(tools) === JSON.stringify(agentTools), `Claude Desktop's agentdesk mcp lists ${tools}`);
    } finally {
      desktop.kill();
    }
    await expectAccessible(page, 'Connect an MCP client');
  } finally {
    rmSync(fake, { recursive: true, force: true });
    rmSync(bare.AGENTDESK_DATA, { recursive: true, force: true });
  }
  await page.context().close();
});

test('jobs: a job every minute, run now, its task on the board and its run listed; a bad cron shows the server message', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByTestId('jobs-empty').waitFor();
  await page.getByRole('button', { name: 'New job' }).click();
  await page.getByLabel('Name').fill('minutely-report');
  await page.getByLabel('Cron expression').fill('61 * * * *');
  await page.getByLabel('Time zone').fill('Europe/Berlin');
  await page.getByLabel('Task summary').fill('Write the minutely report');
  await page.getByLabel(/Steps/).fill('Collect\nWrite');
  await page.getByRole('button', { name: 'Create job' }).click();
  const err = page.getByTestId('job-error');
  await err.waitFor();
  const msg = await err.textContent();
  expect(/61|range|minute/i.test(msg), `bad cron message: ${msg}`);
  // Shown beside the form, and not repeated as a toast.
  expect((await page.getByTestId('toast').filter({ hasText: msg.trim().slice(0, 20) }).count()) === 0, 'the form error is repeated as a toast');
  await page.screenshot({ path: join(shots, 'jobs-bad-cron.png') });
  await expectAccessible(page, 'the job form with an error');
  await page.getByLabel('Cron expression').fill('* * * * *');
  await page.getByRole('button', { name: 'Create job' }).click();
  const row = page.getByTestId('job-row').filter({ hasText: 'minutely-report' });
  await row.waitFor();
  expect((await row.textContent()).includes('Europe/Berlin'), 'the time zone is listed');
  await row.getByRole('button', { name: 'Run now' }).click();
  const run = page.getByTestId('run-row').filter({ hasText: 'manual' });
  await run.waitFor();
  expect((await run.textContent()).includes('created'), `run: ${await run.textContent()}`);
  const taskLink = run.getByRole('link', { name: /^#\d+$/ });
  await taskLink.waitFor();
  const taskId = (await taskLink.textContent()).slice(1);
  // Pause: no more runs while the rest of the tests run.
  await row.getByRole('button', { name: 'Pause' }).click();
  await row.getByText('paused').first().waitFor();
  await page.screenshot({ path: join(shots, 'jobs.png') });
  await expectAccessible(page, 'jobs with runs');
  await taskLink.click();
  await page.locator(`[data-column="Backlog"] [data-task-id="${taskId}"]`).waitFor();
  expect((await page.locator(`[data-task-id="${taskId}"]`).textContent()).includes('Write the minutely report'), 'the job task is on the board');
  await page.keyboard.press('Escape');
  // Delete the job (its task stays).
  await page.getByRole('link', { name: 'Jobs' }).click();
  page.once('dialog', (d) => d.accept());
  await page.getByTestId('job-row').filter({ hasText: 'minutely-report' }).getByRole('button', { name: 'Delete' }).click();
  await page.getByTestId('jobs-empty').waitFor();
  await rest('DELETE', `/api/tasks/${taskId}`);
  await page.context().close();
});

test('skills and activity: a skill made in the UI is listed with via ui; a task needing a skill its agent lacks shows the 400', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByLabel('New skill name').fill('python');
  await page.getByLabel('New skill description').fill('Writes Python');
  await page.getByRole('button', { name: 'Add skill' }).click();
  await page.getByTestId('skill-row').filter({ hasText: 'python' }).waitFor();
  await page.getByLabel('New skill name').fill('rust');
  await page.getByRole('button', { name: 'Add skill' }).click();
  await page.getByTestId('skill-row').filter({ hasText: 'rust' }).waitFor();
  const worker = page.getByTestId('agent-row').filter({ hasText: 'worker' });
  await worker.getByLabel('Give worker a skill').selectOption({ label: 'python' });
  await worker.getByTestId('agent-skills').getByText('python').waitFor();
  const agents = (await gql('{ agents { name skills { name } } }')).agents;
  expect(agents.find((a) => a.name === 'worker').skills.some((s) => s.name === 'python'), 'the server recorded the skill');
  await page.screenshot({ path: join(shots, 'agents-skills.png') });
  await expectAccessible(page, 'agents with skills');

  // A task needing rust, for worker (who lacks it): the server's 400 as a toast.
  await page.getByRole('link', { name: 'Board' }).click();
  await page.getByRole('button', { name: /New task/ }).click();
  await page.getByLabel('Summary').fill('Port to Rust');
  await page.getByRole('checkbox', { name: 'rust' }).check();
  // The form says which agents lack a required skill; the server refuses them anyway.
  await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'worker (lacks a required skill)' });
  await page.getByRole('button', { name: 'Create task' }).click();
  const toast = page.getByRole('alert').filter({ hasText: /rust/ });
  await toast.waitFor();
  const toastText = await toast.textContent();
  expect(/lack|missing|skill/i.test(toastText), `mismatch toast: ${toastText}`);
  await page.screenshot({ path: join(shots, 'task-skill-mismatch.png') });
  await page.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('link', { name: 'Activity' }).click();
  await page.getByLabel('Interface').selectOption('ui');
  await page.getByLabel('Object type').fill('skill');
  await page.getByRole('button', { name: 'Filter' }).click();
  const rows = page.getByTestId('activity-row');
  await rows.filter({ hasText: 'skill.created' }).first().waitFor();
  const all = await rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-via'), e.getAttribute('data-action')]));
  expect(all.length >= 2 && all.every(([via]) => via === 'ui'), `activity rows: ${JSON.stringify(all)}`);
  // Newest first: the second skill (rust) comes before the first (python).
  const created = all.filter(([, a]) => a === 'skill.created');
  expect(created.length === 2, `skill.created rows: ${created.length}`);
  const texts = await rows.filter({ hasText: 'skill.created' }).allTextContents();
  expect(texts[0].includes('ui'), 'the actor is the UI token');
  // The same trail from the API: the UI's GraphQL mutations are recorded as via ui.
  const api = (await gql('{ activity(first: 20, objectType: "skill", via: "ui") { action via } }')).activity;
  expect(api.filter((a) => a.action === 'skill.created').length === 2, `api activity ${JSON.stringify(api)}`);
  await page.screenshot({ path: join(shots, 'activity.png') });
  await expectAccessible(page, 'the activity trail');
  await page.getByRole('button', { name: 'Clear' }).click();
  await rows.first().waitFor();
  await page.context().close();
});

test('usage: a reported cost in the chart and totals; a budget below it keeps an agent task in Backlog with the message', async () => {
  // A second agent that reports usage through the REST callback with the agent headers.
  cli(['agent', 'create', '--project', project, '--name', 'reporter', '--data', data]);
  const env = {};
  for (const line of cli(['agent', 'env', '--project', project, '--name', 'reporter', '--url', url, '--data', data]).split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  const reporter = (await gql('{ agents { id name } }')).agents.find((a) => a.name === 'reporter');
  const t = await rest('POST', '/api/tasks', { summary: 'Summarise the logs', agent_id: reporter.id });
  for (const [i, usage] of [
    { input_tokens: 120000, output_tokens: 30000, cost_usd: 1.25, model: 'gpt-4o' },
    { input_tokens: 4000, output_tokens: 1000, cost_usd: 0.75, model: 'claude-sonnet' },
  ].entries()) {
    const res = await fetch(`${url}/api/agent_callback/${t.id}`, {
      method: 'POST',
      headers: {
        'X-Task-Authorization': env.SERVICE_API_TOKEN,
        'X-Task-Namespace': env.SERVICE_NAMESPACE,
        'X-Agent-Name': 'reporter',
        'Content-Type': 'application/json',
        'Idempotency-Key': `usage-${i}`,
      },
      body: JSON.stringify({ project_id: project, usage, ...(i === 1 ? { status: 'Done' } : { status: 'Doing' }) }),
    });
    expect(res.ok, `callback: ${res.status} ${await res.text()}`);
  }
  const page = await newPage('dark');
  await signIn(page);
  await page.getByRole('link', { name: 'Usage' }).click();
  await expectText(page.getByTestId('total-cost'), '$2.00');
  await expectText(page.getByTestId('total-input'), '124,000');
  await expectText(page.getByTestId('total-output'), '31,000');
  const today = new Date().toISOString().slice(0, 10);
  const bars = page.getByTestId('bar');
  expect((await bars.count()) === 30, `bars: ${await bars.count()}`);
  expect((await bars.last().getAttribute('data-day')) === today, 'the last bar is today');
  expect(Number(await bars.last().getAttribute('data-cost')) === 2, 'today costs $2');
  expect(Number(await bars.last().locator('.bar').getAttribute('height')) > 100, 'today is the tall bar');
  await page.getByTestId('usage-by-agent').getByText('reporter').waitFor();
  await page.getByTestId('usage-by-model').getByText('gpt-4o').waitFor();
  await page.getByTestId('usage-by-model').getByText('claude-sonnet').waitFor();
  // A budget below what is spent.
  await page.getByLabel('Monthly budget (USD)').fill('1.5');
  await page.getByRole('button', { name: 'Set budget' }).click();
  await page.getByTestId('budget-exceeded').waitFor();
  await page.screenshot({ path: join(shots, 'usage.png') });
  await expectAccessible(page, 'usage with costs and a budget');
  // A task for an agent now stays in Backlog, with the server's message.
  await page.getByRole('link', { name: 'Board' }).click();
  await page.getByRole('button', { name: /New task/ }).click();
  await page.getByLabel('Summary').fill('Over budget task');
  await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'reporter' });
  await page.getByRole('button', { name: 'Create task' }).click();
  await page.getByText(/budget of \$1\.50 is spent/).first().waitFor();
  await page.getByTestId('budget-banner').waitFor();
  const card = page.locator('[data-column="Backlog"] [data-task-id]', { hasText: 'Over budget task' });
  await card.waitFor();
  await page.screenshot({ path: join(shots, 'budget-backlog.png') });
  // Remove the budget (none left behind for the tests that follow).
  await page.getByRole('link', { name: 'Usage and budget' }).click();
  await page.getByTestId('budget').getByRole('button', { name: 'Remove' }).click();
  await page.getByTestId('budget').getByText('(no budget)').waitFor();
  expect((await gql('{ budget { monthlyUsd } }')).budget.monthlyUsd === null, 'the budget is removed');
  const tasks = await rest('GET', '/api/tasks');
  for (const x of tasks.filter((x) => x.summary === 'Over budget task' || x.id === t.id)) await rest('DELETE', `/api/tasks/${x.id}`);
  await page.context().close();
});

test('knowledge: create a space, add documents, search: the answering chunk first', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Knowledge' }).click();
  await page.getByTestId('spaces-empty').waitFor();
  await page.getByLabel('New space name').fill('handbook');
  await page.getByLabel('Description').fill('How we work');
  await page.getByRole('button', { name: 'Create space' }).click();
  await page.getByTestId('docs-empty').waitFor();
  // A pasted document.
  await page.getByLabel('Or paste text').fill('ops.md');
  await page.getByLabel('Text', { exact: true }).fill('# Backups\n\nRun agentdesk backup nightly to a second disk; keep fourteen copies.\n\n# Holidays\n\nAsk your lead two weeks ahead.');
  await page.getByRole('button', { name: 'Add document' }).click();
  await page.getByTestId('doc-row').filter({ hasText: 'ops.md' }).waitFor();
  // A file, read in the browser (Markdown) and an HTML page.
  await page.getByLabel('Add a file').setInputFiles([
    { name: 'kitchen.md', mimeType: 'text/markdown', buffer: Buffer.from('# Kitchen\n\nThe coffee machine is descaled on Fridays. Milk lives in the left fridge.') },
    { name: 'deploy.html', mimeType: 'text/html', buffer: Buffer.from('<html><body><h1>Deploys</h1><p>Deploys go out on Tuesdays after the release review.</p></body></html>') },
  ]);
  await page.getByTestId('doc-row').filter({ hasText: 'deploy.html' }).waitFor({ timeout: 10000 });
  await page.getByTestId('doc-row').filter({ hasText: 'kitchen.md' }).waitFor();
  // A PDF is refused in the browser with what to do instead.
  await page.getByLabel('Add a file').setInputFiles({ name: 'guide.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4') });
  await page.getByText(/guide\.pdf: PDFs need/).first().waitFor();
  // Link the space to the agent.
  await page.getByRole('checkbox', { name: 'worker' }).check();
  for (let i = 0; ; i++) {
    const s = (await gql('{ vectorSpaces { name agentIds } }')).vectorSpaces.find((x) => x.name === 'handbook');
    if (s?.agentIds.length === 1) break;
    if (i >= 100) throw new Error(`the space was not linked to the agent within 10 s: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.getByRole('textbox', { name: 'Search', exact: true }).fill('when is the coffee machine descaled?');
  await page.getByRole('button', { name: 'Search' }).click();
  const first = page.getByTestId('search-result').first();
  await first.waitFor();
  expect((await first.getAttribute('data-document')) === 'kitchen.md', `first result: ${await first.textContent()}`);
  expect((await first.textContent()).includes('descaled on Fridays'), 'the answering chunk is first');
  // Scores in words; the numbers are in the title.
  expect((await first.getByTestId('match').textContent()).startsWith('best match'), 'the first result is not called the best match');
  const scores = await page.getByTestId('match').evaluateAll((els) => els.map((e) => Number(/score ([\d.]+)/.exec(e.title)[1])));
  expect(scores.every((s, i) => i === 0 || s <= scores[i - 1]), `best first: ${scores}`);
  await page.screenshot({ path: join(shots, 'knowledge.png') });
  await expectAccessible(page, 'knowledge search results');
  await page.getByLabel('Mode').selectOption('keyword');
  await page.getByRole('textbox', { name: 'Search', exact: true }).fill('deploys Tuesdays');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByTestId('search-result').first().filter({ hasText: 'Tuesdays' }).waitFor();
  expect((await page.getByTestId('search-result').first().getAttribute('data-document')) === 'deploy.html', 'keyword: deploy.html first');
  // The agent shows its linked space.
  await page.getByRole('link', { name: 'Agents' }).click();
  await page.getByTestId('agent-row').filter({ hasText: 'worker' }).getByTestId('agent-spaces').getByText('handbook').waitFor();
  await page.context().close();
});

test('scopes: a token without admin gets no Usage, Activity, Knowledge or Tokens', async () => {
  const reader = cli(['token', 'create', '--project', project, '--name', 'reader', '--data', data, '--scopes', 'task:read,messaging:read']);
  const page = await newPage();
  await page.goto(url + '/');
  await page.getByLabel('Platform token').fill(reader);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor();
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Jobs' }).waitFor();
  for (const name of ['Usage', 'Activity', 'Knowledge', 'Tokens']) expect((await nav.getByRole('link', { name }).count()) === 0, `${name} is offered without admin`);
  await page.goto(url + '/activity');
  await page.getByText('This screen needs the admin scope').waitFor();
  await page.context().close();
});

// The figure is a measurement to watch (frontend/README.md: aim under 1 s), reported on
// every run; the flow fails only far past it (10 s), where something is broken rather
// than merely slow on a shared machine beside the server and the agent.
test('board: first render of 500 tasks (reported; fails past 10 s)', async () => {
  const before = (await rest('GET', '/api/tasks/counts')).total;
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
  const counts = await rest('GET', '/api/tasks/counts');
  expect(counts.total === 500, 'not 500 tasks');
  // Each column shows its first page (50 cards) and its count; the rest loads on scroll.
  const shown = statuses.reduce((n, s) => n + Math.min(counts[s], 50), 0);
  const page = await newPage();
  await signIn(page);
  // Three fresh loads, from navigation to every first page visible; the best of them is
  // the figure, so that a moment of load on a shared machine does not decide it.
  const times = [];
  for (let run = 0; run < 3; run++) {
    await page.goto('about:blank');
    const t0 = Date.now();
    await page.goto(url + '/board');
    await page.waitForFunction((n) => document.querySelectorAll('[data-task-id]').length >= n, shown, { polling: 'raf', timeout: 30000 });
    await page.locator('[data-task-id]').last().waitFor({ state: 'visible' });
    times.push(Date.now() - t0);
  }
  const ms = Math.min(...times);
  console.log(`  BOARD_500_FIRST_RENDER_MS=${ms} (best of ${times.join(', ')} ms; aim under 1000 ms)`);
  expect((await page.getByTestId('task-total').textContent()) === '500 tasks', 'the board does not count 500 tasks');
  await page.screenshot({ path: join(shots, 'board-500.png') });
  expect(ms < 10000, `the board took ${times.join(', ')} ms for 500 tasks: far past the 1000 ms aim (fails at 10000 ms)`);
  // Scrolling to the end of a long column loads its next page.
  const failed = page.locator('[data-column="Failed"] [data-task-id]');
  if (counts.Failed > 50) {
    await page.locator('[data-column="Failed"] [data-testid="load-more"]').scrollIntoViewIfNeeded();
    await page.waitForFunction((n) => document.querySelectorAll('[data-column="Failed"] [data-task-id]').length === n, Math.min(counts.Failed, 100), { timeout: 15000 });
    expect((await failed.count()) === Math.min(counts.Failed, 100), 'scrolling did not load the next page of Failed');
  }
  await page.context().close();
});

// Issue 25 and issue 20 item 12: a project of 20,000 tasks, most of them Done, in a
// project of its own (the other flows keep their small board). The board loads the
// counts and one page per column, whatever the project's size: the figures are its first
// render and the bytes it transferred (aims: 1 s and 5 MB), reported; the flow fails only
// far past them (10 s, 5 MB: bytes do not depend on the machine's load).
test('board: first render of 20,000 tasks (reported; fails past 10 s or 5 MB)', async () => {
  const big = JSON.parse(cli(['project', 'create', '--name', 'Big', '--data', data])).id;
  const bigToken = cli(['token', 'create', '--project', big, '--name', 'big', '--data', data, '--scopes', 'task:read,task:write']);
  const call = async (method, path, body) => {
    const res = await fetch(url + path, { method, headers: { Authorization: 'Bearer ' + bigToken, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const N = 20000;
  const t0 = Date.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) {
      const t = await call('POST', '/api/tasks', { summary: `Scale task ${i}`, details: 'Made by the 20,000-task board test.', steps: [{ title: 'a' }, { title: 'b' }] });
      // 95% Done, the rest spread over the other columns.
      const status = i % 20 === 0 ? ['Backlog', 'Todo', 'Doing', 'Waiting', 'Failed'][(i / 20) % 5] : 'Done';
      if (status !== 'Backlog') await call('PUT', `/api/tasks/${t.id}/status`, { status });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const counts = await call('GET', '/api/tasks/counts');
  expect(counts.total === N, `${counts.total} tasks, not ${N}`);
  console.log(`  seeded ${N} tasks in ${Date.now() - t0} ms`);
  const { page, ms, times, bytes } = await loadBigBoard(bigToken, call, counts, '20K');
  await page.screenshot({ path: join(shots, 'board-20k.png') });
  // The search box filters every column on the server: words by prefix (1999 finds
  // task 1999 and tasks 19990 to 19999).
  const s0 = Date.now();
  await page.getByTestId('board-search').fill('scale 1999');
  await page.getByTestId('task-total').getByText('11 tasks found').waitFor({ timeout: 15000 });
  await page.waitForFunction(() => document.querySelectorAll('[data-task-id]').length === 11, null, { timeout: 15000 });
  console.log(`  BOARD_20K_SEARCH_MS=${Date.now() - s0} (from typing to 11 cards, including the box's 250 ms pause)`);
  await page.screenshot({ path: join(shots, 'board-20k-search.png') });
  expect(ms < 10000, `the board took ${times.join(', ')} ms for 20,000 tasks: far past the 1000 ms aim (fails at 10000 ms)`);
  expect(bytes < 5e6, `the board transferred ${bytes} bytes for 20,000 tasks (fails at 5 MB)`);
  await page.context().close();
});

/**
 * Signs in with token and loads the board three times, fresh (the browser cache off,
 * as a first visit), until every column's first page is drawn; prints the best time and
 * the most bytes of a load (BOARD_<label>_FIRST_RENDER_MS and _BYTES) and checks the
 * counts and Done's order. The big-board flows (20,000 tasks here, 1,000,000 seeded in
 * the store) measure the same way.
 */
async function loadBigBoard(token, call, counts, label) {
  const shown = ['Backlog', 'Todo', 'Doing', 'Waiting', 'Done', 'Failed'].reduce((n, s) => n + Math.min(counts[s], 50), 0);
  const page = await newPage();
  await page.goto(url + '/');
  await page.getByLabel('Platform token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('conn').getByText('Live').waitFor();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const times = [];
  let bytes = 0;
  for (let run = 0; run < 3; run++) {
    await page.goto('about:blank');
    const start = Date.now();
    await page.goto(url + '/board');
    await page.waitForFunction((n) => document.querySelectorAll('[data-task-id]').length >= n, shown, { polling: 'raf', timeout: 30000 });
    await page.locator('[data-column="Done"] [data-task-id]').first().waitFor({ state: 'visible' });
    times.push(Date.now() - start);
    // Every byte of the load: the page, its assets, the API's answers (transferSize:
    // compressed, as on the wire, headers included).
    const b = await page.evaluate(() =>
      [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].reduce((n, e) => n + (e.transferSize || 0), 0),
    );
    bytes = Math.max(bytes, b);
  }
  const ms = Math.min(...times);
  console.log(`  BOARD_${label}_FIRST_RENDER_MS=${ms} (best of ${times.join(', ')} ms; aim under 1000 ms; ${counts.total} tasks)`);
  console.log(`  BOARD_${label}_BYTES=${bytes} (${(bytes / 1e6).toFixed(2)} MB; aim under 5 MB)`);
  expect((await page.getByTestId('task-total').textContent()) === `${counts.total} tasks`, `the board does not count ${counts.total} tasks`);
  expect((await page.locator('[data-column="Done"]').getAttribute('aria-label')) === `Done, ${counts.Done} tasks`, 'the Done column does not show its count');
  // Done newest first: its first card is the newest Done task.
  const newest = (await call('GET', '/api/tasks?status=Done&order=desc&limit=1'))[0];
  expect((await page.locator('[data-column="Done"] [data-task-id]').first().getAttribute('data-task-id')) === String(newest.id), 'Done is not newest first');
  return { page, ms, times, bytes };
}

// Issue 25: the board of a project of 1,000,000 tasks (90% Done), written straight into
// the store by the bench (`make bench-ui-scale`: -scale-seed, then this flow alone with
// AGENTDESK_E2E_DATA); seeding it over HTTP would take an hour, so it runs only against
// such a directory. Measured as the 20,000-task flow measures (fresh loads, the browser
// cache off, every byte of the load), reported; it fails only far past the aims.
const scaleSeed = externalData && existsSync(join(externalData, 'scale.json')) ? JSON.parse(readFileSync(join(externalData, 'scale.json'), 'utf8')) : null;
if (scaleSeed) test(`board: first render of ${scaleSeed.big.tasks.toLocaleString('en')} tasks, seeded in the store (reported; fails past 10 s or 5 MB)`, async () => {
  const bigToken = scaleSeed.big.token;
  const call = async (method, path) => {
    const res = await fetch(url + path, { method, headers: { Authorization: 'Bearer ' + bigToken } });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const counts = await call('GET', '/api/tasks/counts');
  const N = scaleSeed.big.tasks;
  expect(counts.total === N, `${counts.total} tasks, not ${N}`);
  const { page, ms, times, bytes } = await loadBigBoard(bigToken, call, counts, '1M');
  await page.screenshot({ path: join(shots, 'board-1m.png') });
  // The search box, on the server: the bench's word is in one task of 1,000.
  const s0 = Date.now();
  await page.getByTestId('board-search').fill('zqxbench');
  await page.getByTestId('task-total').getByText(`${N / 1000} tasks found`).waitFor({ timeout: 30000 });
  await page.waitForFunction((n) => document.querySelectorAll('[data-task-id]').length === n, Math.min(N / 1000, 50), { timeout: 30000 });
  console.log(`  BOARD_1M_SEARCH_MS=${Date.now() - s0} (from typing to the cards, including the box's 250 ms pause)`);
  expect(ms < 10000, `the board took ${times.join(', ')} ms for ${N} tasks: far past the 1000 ms aim (fails at 10000 ms)`);
  expect(bytes < 5e6, `the board transferred ${bytes} bytes for ${N} tasks (fails at 5 MB)`);
  await page.context().close();
});

// Team mode against a real OpenID Provider: backend/testenv/oidcop's command (zitadel's
// op package and its own login page), a second agentdesk with --oidc-issuer, the owner
// made with `agentdesk user add`, and a second project where Dana is a member.
async function startTeam() {
  const opBin = join(mkdtempSync(join(tmpdir(), 'agentdesk-oidcop-')), 'oidcop');
  execFileSync('go', ['build', '-o', opBin, './backend/testenv/oidcop/cmd/oidcop'], { cwd: root, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
  const teamPort = await freePort();
  const base = `http://127.0.0.1:${teamPort}`;
  const op = start(['--client-id', 'agentdesk', '--client-secret', 's3cret', '--redirect', base + '/auth/callback',
    '--users', 'dana:pw:dana@acme.test:Dana Scott,eve:pw:eve@elsewhere.test:Eve Outsider'], {}, opBin);
  const issuer = await new Promise((ok, fail) => {
    op.stdout.on('data', (d) => ok(String(d).split('\n')[0].trim()));
    op.on('exit', (code) => fail(new Error(`oidcop exited ${code}: ${op.log.join('')}`)));
  });
  const teamData = mkdtempSync(join(tmpdir(), 'agentdesk-e2e-team-'));
  const srv = start(['--serve', '--addr', `127.0.0.1:${teamPort}`, '--data', teamData, '--public-url', base,
    '--oidc-issuer', issuer, '--oidc-client-id', 'agentdesk', '--oidc-provider-name', 'Acme ID'], { AGENTDESK_OIDC_CLIENT_SECRET: 's3cret' });
  await waitHealthy(base, srv);
  const d = ['--data', teamData];
  const main = JSON.parse(cli(['project', 'list', ...d]).split('\n')[0]);
  cli(['user', 'add', '--project', main.id, '--email', 'dana@acme.test', '--role', 'owner', ...d]);
  const side = JSON.parse(cli(['project', 'create', '--name', 'Side project', ...d]));
  cli(['user', 'add', '--project', side.id, '--email', 'dana@acme.test', '--role', 'member', ...d]);
  // The reference agent asks the question of a step that ends with "?".
  const tok = cli(['token', 'create', '--project', main.id, '--name', 'setup', '--scopes', 'task:read,task:write', ...d]);
  const agent = JSON.parse(cli(['agent', 'create', '--project', main.id, '--name', 'helper', ...d]));
  const env = {};
  for (const line of cli(['agent', 'env', '--project', main.id, '--name', 'helper', '--url', base, ...d]).split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  start(['agent', 'run', '--name', 'helper', '--poll', '200ms', '--pause', '100ms'], env);
  const res = await fetch(base + '/api/tasks', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + tok, 'Content-Type': 'application/json' },
    body: JSON.stringify({ summary: 'Book the offsite', steps: [{ title: 'Which city?' }, { title: 'Book it' }], agent_id: agent.id }),
  });
  if (!res.ok) throw new Error(`create task: ${res.status} ${await res.text()}`);
  return { base, main, side, srv, teamData };
}

test('team mode: sign in with the provider, answer as Dana, switch project, members, sessions, sign out', async () => {
  const tm = await startTeam();
  let page;
  try {
    page = await newPage();
    page.on('dialog', (d) => d.accept());
    await page.goto(tm.base + '/');
    const provider = page.getByRole('link', { name: 'Sign in with Acme ID' });
    await provider.waitFor();
    expect(await page.getByLabel('Platform token').isVisible(), 'the token field is not below the provider button');
    await page.screenshot({ path: join(shots, 'team-signin.png') });
    await provider.click();

    // The provider's own login page.
    await page.getByLabel('Username:').fill('dana');
    await page.getByLabel('Password:').fill('pw');
    await page.screenshot({ path: join(shots, 'team-provider-login.png') });
    await page.getByRole('button', { name: 'Login' }).click();

    // Back at agentdesk, signed in: nobody asked for a token.
    await page.getByTestId('conn').getByText('Live').waitFor({ timeout: 15000 });
    await expectText(page.getByTestId('who'), 'Dana Scott');
    await page.locator('[data-column="Waiting"] [data-task-id]', { hasText: 'Book the offsite' }).waitFor({ timeout: 15000 });
    await page.screenshot({ path: join(shots, 'team-board.png') });

    // A new tab of the same browser is signed in too.
    const tab = await page.context().newPage();
    await tab.goto(tm.base + '/inbox');
    await tab.getByTestId('who').getByText('Dana Scott').waitFor();
    await tab.close();

    // GraphiQL signs in with the session cookie and its X-CSRF-Token (a POST needs it).
    const gq = await page.context().newPage();
    await gq.goto(tm.base + '/graphql');
    await gq.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 15000 });
    await gq.evaluate(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue('{ viewer { name kind } }'));
    await gq.locator('.graphiql-execute-button').click();
    const answer = () => gq.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() ?? '');
    for (let i = 0; i < 100 && !(await answer()).includes('Dana Scott'); i++) await gq.waitForTimeout(100);
    expect((await answer()).includes('"name": "Dana Scott"'), `GraphiQL as Dana: ${await answer()}`);
    await gq.close();

    // Answer in the Inbox; the thread and the activity trail say Dana answered.
    await page.getByRole('link', { name: /Inbox/ }).click();
    const item = page.getByTestId('inbox-item').filter({ hasText: 'Book the offsite' });
    await item.getByText('Which city?').waitFor();
    await item.getByTestId('reply').fill('Lisbon');
    await item.getByTestId('reply').press('Control+Enter');
    await page.getByTestId('inbox-empty').waitFor({ timeout: 10000 });
    await page.getByRole('link', { name: /Board/ }).click();
    await page.locator('[data-task-id]', { hasText: 'Book the offsite' }).click();
    const detail = page.getByRole('dialog', { name: 'Task details' });
    await detail.getByText('Lisbon').first().waitFor();
    await detail.getByTestId('convo-who').filter({ hasText: 'Dana Scott' }).first().waitFor();
    await page.screenshot({ path: join(shots, 'team-answered.png') });
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByTestId('activity-row').filter({ hasText: 'task.updated' }).filter({ hasText: 'Dana Scott' }).first().waitFor();

    // Members: invite Sam; inviting Sam again shows the server's refusal.
    await page.getByRole('link', { name: 'Members' }).click();
    const row = page.getByTestId('member-row').filter({ hasText: 'dana@acme.test' });
    await row.waitFor();
    expect((await row.getByLabel('Role of Dana Scott').inputValue()) === 'owner', 'Dana is not listed as owner');
    for (let i = 0; i < 2; i++) {
      await page.getByLabel('Email').fill('sam@acme.test');
      await page.getByLabel('Role', { exact: true }).selectOption('member');
      await page.getByRole('button', { name: 'Invite' }).click();
      await page.getByTestId('member-row').filter({ hasText: 'sam@acme.test' }).waitFor();
    }
    await page.getByTestId('member-problem').filter({ hasText: 'already a member' }).waitFor();
    await page.getByTestId('member-row').filter({ hasText: 'sam@acme.test' }).getByRole('combobox').selectOption('viewer');
    await page.getByText('is a viewer now').first().waitFor();
    await page.screenshot({ path: join(shots, 'team-members.png') });

    // Switch to the side project, where Dana is a member: its empty board, no admin screens.
    await page.getByRole('link', { name: /Board/ }).click();
    await page.getByTestId('project-switcher').selectOption({ label: 'Side project (member)' });
    await page.locator('[data-task-id]', { hasText: 'Book the offsite' }).waitFor({ state: 'detached' });
    await page.getByTestId('conn').getByText('Live').waitFor();
    expect((await page.getByRole('link', { name: 'Members' }).count()) === 0, 'a member sees the Members screen');
    await page.getByRole('button', { name: /New task/ }).click();
    await page.getByLabel('Summary').fill('Side work');
    await page.getByRole('button', { name: 'Create task' }).click();
    await page.locator('[data-task-id]', { hasText: 'Side work' }).waitFor();
    await page.screenshot({ path: join(shots, 'team-switched.png') });

    // Your sessions: this browser is listed and marked.
    await page.getByRole('link', { name: 'Settings' }).click();
    const sessions = page.getByTestId('your-sessions');
    await sessions.getByTestId('session-row').filter({ hasText: 'this browser' }).waitFor();
    await page.screenshot({ path: join(shots, 'team-sessions.png') });

    // Sign out: through the provider's end_session and back to the sign-in page.
    await page.getByTestId('sign-out').click();
    await page.getByRole('link', { name: 'Sign in with Acme ID' }).waitFor({ timeout: 15000 });
    expect(new URL(page.url()).origin === tm.base, `signed out to ${page.url()}`);
    const me = await page.evaluate(() => fetch('/api/me').then((r) => r.status));
    expect(me === 401, `/api/me after sign-out: ${me}`);
    await page.screenshot({ path: join(shots, 'team-signed-out.png') });

    // Someone not invited: the provider signs them in, agentdesk says why it does not.
    await page.getByRole('link', { name: 'Sign in with Acme ID' }).click();
    await page.getByLabel('Username:').fill('eve');
    await page.getByLabel('Password:').fill('pw');
    await page.getByRole('button', { name: 'Login' }).click();
    await page.getByRole('alert').filter({ hasText: 'eve@elsewhere.test is not invited' }).waitFor();
    await page.screenshot({ path: join(shots, 'team-refused.png') });
    await page.context().close();
  } catch (e) {
    await page?.screenshot({ path: join(shots, 'team-failure.png') }).catch(() => {});
    console.log('--- team server log (tail) ---\n' + tm.srv.log.join('').slice(-3000));
    throw e;
  } finally {
    rmSync(tm.teamData, { recursive: true, force: true });
  }
});

test('webhook: created with its secret shown once, a test event delivered and listed', async () => {
  // A tiny receiver: it checks each delivery's Standard Webhooks signature with the
  // secret the screen showed, and answers 204.
  const got = [];
  let secret = '';
  const receiver = createHttpServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const id = req.headers['webhook-id'], ts = req.headers['webhook-timestamp'];
      const mac = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${ts}.`).update(body).digest('base64');
      got.push({ type: JSON.parse(body).type, valid: req.headers['webhook-signature'] === 'v1,' + mac });
      res.writeHead(204).end();
    });
  });
  await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
  const hookURL = `http://127.0.0.1:${receiver.address().port}/agentdesk`;
  const page = await newPage();
  try {
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL').fill(hookURL);
    await page.getByLabel('Description').fill('e2e receiver');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    secret = await page.getByTestId('webhook-secret').inputValue();
    expect(/^whsec_[A-Za-z0-9+/]{32}$/.test(secret), `secret ${secret}`);
    await page.screenshot({ path: join(shots, 'webhook-secret.png') });
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByTestId('webhook-row').filter({ hasText: hookURL });
    await row.getByRole('button', { name: 'Send test' }).click();
    await page.getByTestId('delivery-row').filter({ hasText: 'webhook.test' }).getByText(/^204 in \d+ ms$/).waitFor({ timeout: 10000 });
    expect(got.some((g) => g.type === 'webhook.test' && g.valid), `deliveries received: ${JSON.stringify(got)}`);
    expect(got.every((g) => g.valid), `a delivery with a bad signature: ${JSON.stringify(got)}`);
    await page.screenshot({ path: join(shots, 'webhook-deliveries.png') });
    page.once('dialog', (d) => d.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No webhooks yet.').waitFor();
  } finally {
    await page.context().close();
    receiver.close();
  }
});

test('remote A2A agent: registered on the Agents screen by its card URL, its card shown', async () => {
  // A card served on loopback (the server runs with --webhooks-allow-private).
  const cardServer = createHttpServer((req, res) => {
    const base = `http://127.0.0.1:${cardServer.address().port}`;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({
      name: 'Translator', description: 'Translates release notes.', url: base + '/rpc', protocolVersion: '0.3.0', version: '1',
      preferredTransport: 'JSONRPC', capabilities: { streaming: true }, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
      skills: [{ id: 'translate', name: 'Translate', description: 'Into any language', tags: ['i18n'] }],
    }));
  });
  await new Promise((ok) => cardServer.listen(0, '127.0.0.1', ok));
  const cardURL = `http://127.0.0.1:${cardServer.address().port}/.well-known/agent-card.json`;
  const page = await newPage();
  try {
    await signIn(page);
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByLabel('Name in this project').fill('translator');
    await page.getByLabel('Agent Card URL').fill(cardURL);
    await page.getByLabel('Credential', { exact: true }).selectOption('bearer');
    await page.getByLabel('The token or key').fill('s3cret-e2e');
    await page.getByRole('button', { name: 'Register remote agent' }).click();
    const card = page.getByTestId('remote-agent').filter({ hasText: 'Translator' });
    await card.waitFor();
    const text = await card.textContent();
    expect(text.includes('Translates release notes.') && text.includes('Translate') && text.includes('/rpc') && !text.includes('s3cret-e2e'), `the card: ${text}`);
    await page.getByTestId('agent-row').filter({ hasText: 'translator' }).waitFor(); // an agent of the project
    await page.screenshot({ path: join(shots, 'remote-agent.png') });
  } finally {
    await page.context().close();
    cardServer.close();
  }
});

test('GraphiQL: opened from Settings, signed in by the session, runs a query, shows the schema docs', async () => {
  const page = await newPage();
  await signIn(page);
  await page.getByRole('link', { name: 'Settings' }).click();
  // The link opens a new tab, signed in by the browser's session cookie.
  const [gq] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('link', { name: 'GraphiQL' }).click()]);
  const violations = [];
  gq.on('console', (m) => /Content Security Policy|Refused to/i.test(m.text()) && violations.push(m.text()));
  gq.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
  await gq.waitForURL(url + '/graphql');
  const csp = (await gq.request.get(url + '/graphql', { headers: { Accept: 'text/html' } })).headers()['content-security-policy'];
  expect(/script-src 'self';/.test(csp) && !/unsafe-eval/.test(csp), `GraphiQL CSP: ${csp}`);
  await gq.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 15000 });
  await gq.evaluate(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue('{ viewer { name kind } }'));
  await gq.locator('.graphiql-execute-button').click();
  const result = () => gq.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue() ?? '');
  for (let i = 0; i < 100 && !(await result()).includes('"name": "ui"'); i++) await gq.waitForTimeout(100);
  const answer = await result();
  expect(answer.includes('"name": "ui"') && answer.includes('"kind": "token"'), `GraphiQL answer: ${answer}`);
  // The schema's docs: the explorer lists the root types and opens Query's fields.
  await gq.getByRole('button', { name: /Show Documentation Explorer/i }).click();
  await gq.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().click();
  await gq.locator('.graphiql-doc-explorer').getByText('viewer', { exact: true }).first().waitFor();
  await gq.setViewportSize({ width: 1280, height: 800 });
  await gq.screenshot({ path: join(shots, 'graphiql-1280.png') });
  await gq.getByRole('button', { name: /Hide Documentation Explorer/i }).click();
  await gq.setViewportSize({ width: 390, height: 844 });
  await gq.screenshot({ path: join(shots, 'graphiql-390.png') });
  expect(violations.length === 0, `CSP violations on the GraphiQL page:\n${violations.join('\n')}`);
  await page.context().close();
});

test('email: the question emailed to the person asked, answered by a click on its page at 390 px (opening it answers nothing); a second click answers nothing; the send in Settings', async () => {
  await gql('mutation { addMember(email: "mia@example.com", role: member) { userId } }');
  const t = await rest('POST', '/api/tasks', { summary: 'Email me the question' });
  await rest('PUT', `/api/tasks/${t.id}/status`, { status: 'Waiting', waiting_details: 'Ship it today?' });
  let mail;
  for (let i = 0; !(mail = mails.find((m) => m.to === 'mia@example.com' && m.body.includes('Ship it today?'))); i++) {
    if (i > 100) throw new Error(`no email to mia@example.com; got ${mails.map((m) => m.to).join(', ') || 'none'}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const link = /http:\/\/\S+\/mail\/\S+/.exec(mail.body)?.[0];
  expect(link, `no link in the email:\n${mail.body}`);

  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.stack ?? e.message));
  await page.goto(link);
  await page.getByText('Ship it today?').waitFor();
  expect((await rest('GET', `/api/tasks/${t.id}`)).status === 'Waiting', 'opening the link answered the question');
  await expectAccessible(page, 'the email link\'s page');
  await page.getByLabel('Your answer').fill('Yes, ship it');
  await page.getByRole('button', { name: 'Send answer' }).click();
  await expectText(page.locator('#status'), 'Your answer is in. The agent has been told.');
  const answered = await rest('GET', `/api/tasks/${t.id}`);
  const last = answered.conversation[answered.conversation.length - 1];
  expect(answered.status === 'Doing' && last.content === 'Yes, ship it', `after the click: ${answered.status}, ${JSON.stringify(last)}`);
  await page.screenshot({ path: join(shots, 'email-answered-390.png') });

  // The same link again: it answers nothing, and says why.
  await page.goto(link);
  await page.locator('#status', { hasText: 'This link answers nothing: this link was used already, at ' }).waitFor();
  expect(!(await page.getByRole('button').count()), 'a used link still offers a button');
  await page.screenshot({ path: join(shots, 'email-used-390.png') });
  await ctx.close();

  const admin = await newPage();
  await signIn(admin);
  await admin.goto(url + '/settings');
  await admin.getByTestId('mail-send').filter({ hasText: 'mia@example.com' }).getByText('sent').waitFor();
  await admin.context().close();
});

// expectText waits (up to 10 s) until the element's whole text, trimmed and with its
// whitespace collapsed, is exactly text: '1' is not satisfied by '10'.
async function expectText(locator, text) {
  let seen = '';
  for (let i = 0; i < 100; i++) {
    seen = ((await locator.textContent().catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
    if (seen === text) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`expected exactly "${text}" in ${locator}, last saw "${seen}"`);
}

let failed = 0;
try {
  for (const t of tests) {
    if (filter && !t.name.includes(filter)) continue;
    const started = Date.now();
    pageErrors.length = 0;
    try {
      await t.fn();
      if (pageErrors.length) throw new Error(`uncaught exception in the page:\n${pageErrors.join('\n')}`);
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
  if (!externalData) rmSync(data, { recursive: true, force: true });
}
console.log(failed ? `${failed} e2e test(s) failed; screenshots in ${shots}` : `all e2e tests passed; screenshots in ${shots}`);
process.exit(failed ? 1 : 0);
