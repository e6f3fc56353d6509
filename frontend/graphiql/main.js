// GraphiQL for /graphql: its own page and bundle (graphiql.html, a second Vite entry),
// so React and GraphiQL stay out of the main UI's bundle and its budget. The Go server
// serves the built page at GET /graphql for browsers.
//
// Credentials, as the web UI keeps them: a tab's token (sessionStorage, kept by tabs
// signed in before token sign-in started sessions), the desktop window's token, or the
// session cookie (a person's, or one a token started) with its X-CSRF-Token (from GET
// /api/me). Without any, the Headers pane takes an Authorization header.
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import 'graphiql/graphiql.css';
import './page.css';

const TOKEN_KEY = 'agentdesk.token'; // as frontend/src/lib/api.ts
const PROJECT_KEY = 'agentdesk.project';

async function credentials() {
  const desktop = window.go?.app?.Desktop?.Session;
  if (desktop) return { headers: { Authorization: 'Bearer ' + (await desktop()).token }, who: 'the desktop window' };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) return { headers: { Authorization: 'Bearer ' + token }, who: 'your token' };
  const project = sessionStorage.getItem(PROJECT_KEY) ?? localStorage.getItem(PROJECT_KEY) ?? '';
  const res = await fetch('/api/me', { headers: project ? { 'X-Agentdesk-Project': project } : {} }).catch(() => null);
  if (res?.ok) {
    const me = await res.json();
    if (me.via === 'session' || me.via === 'token-session') {
      const headers = { 'X-Agentdesk-Project': me.project.id };
      if (me.csrfToken) headers['X-CSRF-Token'] = me.csrfToken;
      return { headers, who: `${me.user?.name ?? 'your token'} in ${me.project.name}` };
    }
  }
  return { headers: {}, who: '' };
}

const { headers, who } = await credentials();

/** Posts each operation to /graphql with the page's credentials and the Headers pane's. */
async function fetcher(params, opts) {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers, ...(opts?.headers ?? {}) },
    body: JSON.stringify(params),
  });
  return res.json();
}

const hint = who
  ? `# Signed in as ${who}. Ctrl+Enter runs the query; the Docs button (top left) shows the schema.\n`
  : '# Not signed in: open GraphiQL from the web UI, or put\n#   {"Authorization": "Bearer adk_..."}\n# in the Headers pane below.\n';

createRoot(document.getElementById('graphiql')).render(
  createElement(GraphiQL, {
    fetcher,
    defaultQuery: hint + '{\n  viewer {\n    name\n    kind\n    projectId\n  }\n}\n',
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: who ? false : 'headers',
    shouldPersistHeaders: false,
  }),
);
