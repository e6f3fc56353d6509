// Sign-in, credentials and every call to the server, in one module.
//
// Desktop window: window.go.app.Desktop.Session() (a Wails binding) gives a token and
// the server's URL; HTTP stays relative (the window serves the UI), the event stream
// goes to serverURL. Otherwise (agentdesk --serve): a platform token typed into the
// sign-in form, checked with the GraphQL viewer query and kept in sessionStorage.
import type { Agent, Conversation, DocumentInfo, EnvVar, Message, Participant, Status, StepStatus, Task, Token, Viewer } from './types';

export class ApiError extends Error {
  constructor(
    message: string,
    public status: number,
    public code: string,
  ) {
    super(message);
  }
}

export interface Session {
  token: string;
  viewer: Viewer;
  desktop: boolean;
  /** Where the event stream lives (ws:// or wss://, no path). */
  wsBase: string;
}

const STORAGE_KEY = 'agentdesk.token';
let token = '';

declare global {
  interface Window {
    go?: { app?: { Desktop?: { Session?: () => Promise<{ token: string; serverURL: string }> } } };
  }
}

export function currentToken(): string {
  return token;
}

function pageWsBase(): string {
  return location.origin.replace(/^http/, 'ws');
}

/** The session to start with: the desktop's, a token kept from earlier, or null (show the sign-in form). */
export async function restoreSession(): Promise<Session | null> {
  const desktop = window.go?.app?.Desktop?.Session;
  if (desktop) {
    const s = await desktop();
    token = s.token;
    const viewer = await fetchViewer();
    return { token, viewer, desktop: true, wsBase: s.serverURL.replace(/^http/, 'ws').replace(/\/$/, '') };
  }
  const kept = sessionStorage.getItem(STORAGE_KEY);
  if (!kept) return null;
  token = kept;
  try {
    const viewer = await fetchViewer();
    return { token, viewer, desktop: false, wsBase: pageWsBase() };
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      sessionStorage.removeItem(STORAGE_KEY);
      token = '';
      return null;
    }
    throw e;
  }
}

/** Checks a platform token and keeps it for this browser tab. */
export async function signIn(value: string): Promise<Session> {
  const v = value.trim();
  if (!v) throw new ApiError('Paste a platform token (it starts with adk_).', 400, 'invalid_argument');
  token = v;
  try {
    const viewer = await fetchViewer();
    sessionStorage.setItem(STORAGE_KEY, v);
    return { token: v, viewer, desktop: false, wsBase: pageWsBase() };
  } catch (e) {
    token = '';
    throw e;
  }
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  token = '';
}

async function fetchViewer(): Promise<Viewer> {
  const d = await gql<{ viewer: Viewer }>('{ viewer { kind name scopes projectId } }');
  return d.viewer;
}

function headers(json: boolean): Record<string, string> {
  const h: Record<string, string> = { Accept: 'application/json' };
  if (token) h.Authorization = 'Bearer ' + token;
  if (json) h['Content-Type'] = 'application/json';
  return h;
}

async function errorOf(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`.trim();
  let code = 'internal';
  try {
    const body = await res.json();
    if (body?.error?.message) {
      message = body.error.message;
      code = body.error.code ?? code;
    }
  } catch {
    /* not JSON: keep the status line */
  }
  if (res.status === 401 && code === 'internal') code = 'unauthenticated';
  return new ApiError(message, res.status, code);
}

/** A REST call: JSON in, JSON out; errors carry the server's error.message. */
export async function rest<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('The server cannot be reached. Is agentdesk running?', 0, 'unavailable');
  }
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A GraphQL call; the first error's message becomes the ApiError. */
export async function gql<T>(query: string, variables?: Record<string, unknown>): Promise<T> {
  let res: Response;
  try {
    res = await fetch('/graphql', { method: 'POST', headers: headers(true), body: JSON.stringify({ query, variables }) });
  } catch {
    throw new ApiError('The server cannot be reached. Is agentdesk running?', 0, 'unavailable');
  }
  let body: any;
  try {
    body = await res.json();
  } catch {
    throw await errorOf(res);
  }
  if (body?.errors?.length) {
    const e = body.errors[0];
    const code = e.extensions?.code ?? 'internal';
    throw new ApiError(e.message, code === 'unauthenticated' ? 401 : code === 'forbidden' ? 403 : res.status, code);
  }
  if (!res.ok) throw new ApiError(body?.error?.message ?? `${res.status} ${res.statusText}`, res.status, body?.error?.code ?? 'internal');
  return body.data as T;
}

export function eventsURL(s: Session, since: number | null): string {
  const q = new URLSearchParams({ access_token: s.token });
  if (since !== null) q.set('since', String(since));
  return `${s.wsBase}/api/events?${q}`;
}

/** Downloads a protected file (the Authorization header cannot ride on a plain link). */
export async function download(path: string, fallbackName: string): Promise<void> {
  const res = await fetch(path, { headers: headers(false) });
  if (!res.ok) throw await errorOf(res);
  const cd = res.headers.get('Content-Disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(cd)?.[1] ?? fallbackName;
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// ---- The operations the screens use ----

const P = (s: Session) => `/api/projects/${encodeURIComponent(s.viewer.projectId)}`;

export const api = {
  tasks: () => rest<Task[]>('GET', '/api/tasks'),
  task: (id: number) => rest<Task>('GET', `/api/tasks/${id}`),
  createTask: (t: { summary: string; details?: string; steps?: { title: string }[]; agent_id?: number | null }) =>
    rest<Task>('POST', '/api/tasks', t),
  setStatus: (id: number, status: Status) => rest<Task>('PUT', `/api/tasks/${id}/status`, { status }),
  setAgent: (id: number, agent_id: number | null) => rest<Task>('PUT', `/api/tasks/${id}/agent`, { agent_id }),
  setStep: (id: number, step: number, status: StepStatus) => rest<Task>('PUT', `/api/tasks/${id}/steps/${step}/status`, { status }),
  respond: (id: number, response: string, waiting_version?: number) =>
    rest<Task>('POST', `/api/tasks/${id}/respond`, { response, waiting_version }),
  deleteTask: (id: number) => rest<void>('DELETE', `/api/tasks/${id}`),
  clearDone: () => rest<{ deleted: number }>('DELETE', '/api/tasks/done'),

  agents: () => gql<{ agents: Agent[] }>('{ agents { id name } }').then((d) => d.agents),
  createAgent: (name: string) =>
    gql<{ createAgent: Agent }>('mutation($name: String!) { createAgent(name: $name) { id name } }', { name }).then((d) => d.createAgent),
  agentEnv: (name: string, url: string) =>
    gql<{ agentEnv: EnvVar[] }>('query($name: String!, $url: String) { agentEnv(name: $name, url: $url) { name value } }', { name, url }).then(
      (d) => d.agentEnv,
    ),

  conversations: (s: Session) => rest<Conversation[]>('GET', `${P(s)}/conversations`),
  createConversation: (s: Session, message: string, name?: string) =>
    rest<Conversation>('POST', `${P(s)}/conversations`, { message, name: name || undefined }),
  messages: (s: Session, c: number) => rest<Message[]>('GET', `${P(s)}/conversations/${c}/messages?limit=1000`),
  postMessage: (s: Session, c: number, message: string) => rest<Message>('POST', `${P(s)}/conversations/${c}/messages`, { message }),
  linkedTasks: (s: Session, c: number) => rest<Task[]>('GET', `${P(s)}/conversations/${c}/tasks`),
  documents: (s: Session, c: number) => rest<DocumentInfo[]>('GET', `${P(s)}/conversations/${c}/documents`),
  upload: async (s: Session, c: number, file: File): Promise<DocumentInfo> => {
    const form = new FormData();
    form.append('file', file);
    let res: Response;
    try {
      res = await fetch(`${P(s)}/conversations/${c}/documents`, { method: 'POST', headers: headers(false), body: form });
    } catch {
      throw new ApiError('The server cannot be reached. Is agentdesk running?', 0, 'unavailable');
    }
    if (!res.ok) throw await errorOf(res);
    return res.json();
  },
  participants: (c: number) =>
    gql<{ participants: Participant[] }>('query($c: ID!) { participants(conversationId: $c) { kind name agentId createdAt } }', {
      c: String(c),
    }).then((d) => d.participants),
  addParticipant: (c: number, kind: string, name: string) =>
    gql('mutation($c: ID!, $k: String!, $n: String) { addParticipant(conversationId: $c, kind: $k, name: $n) { id participants } }', {
      c: String(c),
      k: kind,
      n: name,
    }),
  removeParticipant: (c: number, kind: string, name: string) =>
    gql('mutation($c: ID!, $k: String!, $n: String) { removeParticipant(conversationId: $c, kind: $k, name: $n) { id participants } }', {
      c: String(c),
      k: kind,
      n: name,
    }),
  addReaction: (messageId: number, emoji: string) =>
    gql<{ addReaction: Message }>('mutation($m: Int!, $e: String!) { addReaction(messageId: $m, emoji: $e) { id reactions { emoji count } } }', {
      m: messageId,
      e: emoji,
    }).then((d) => d.addReaction),
  removeReaction: (messageId: number, emoji: string) =>
    gql<{ removeReaction: Message }>('mutation($m: Int!, $e: String!) { removeReaction(messageId: $m, emoji: $e) { id reactions { emoji count } } }', {
      m: messageId,
      e: emoji,
    }).then((d) => d.removeReaction),

  tokens: () =>
    gql<{ tokens: Token[] }>('{ tokens { id name type scopes hint createdAt lastUsedAt revokedAt expiresAt } }').then((d) => d.tokens),
  createToken: (type: 'platform' | 'data', name: string, scopes: string[]) => {
    const m = type === 'data' ? 'createDataToken' : 'createPlatformToken';
    return gql<Record<string, Token>>(
      `mutation($n: String!, $s: [String!]!) { t: ${m}(name: $n, scopes: $s) { id name type scopes hint createdAt lastUsedAt revokedAt token } }`,
      { n: name, s: scopes },
    ).then((d) => d.t);
  },
  revokeToken: (id: number) => gql<{ revokeToken: boolean }>('mutation($id: Int!) { revokeToken(id: $id) }', { id }),
  rotateToken: (id: number) =>
    gql<{ rotateToken: Token }>('mutation($id: Int!) { rotateToken(id: $id) { id name type scopes hint createdAt lastUsedAt revokedAt token } }', {
      id,
    }).then((d) => d.rotateToken),

  about: () => rest<{ version: string; dataDir?: string; database?: string }>('GET', '/api/about'),
};
