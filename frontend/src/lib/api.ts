// Sign-in, credentials and every call to the server, in one module.
//
// Desktop window: window.go.app.Desktop.Session() (a Wails binding) gives a token and
// the server's URL; HTTP stays relative (the window serves the UI), the event stream
// goes to serverURL. Otherwise (agentdesk --serve): a platform token typed into the
// sign-in form is traded for a browser session (POST /api/session), whose cookie signs
// in every tab and link of this browser; or team mode's session cookie.
import type {
  About,
  ActivityEntry,
  Agent,
  Budget,
  Conversation,
  DeletedCount,
  DocumentInfo,
  EnvVar,
  Job,
  JobRun,
  Webhook,
  WebhookDelivery,
  MailSend,
  RemoteAgent,
  Member,
  Role,
  BrowserSession,
  Message,
  NewTask,
  Participant,
  Reaction,
  SearchResult,
  Skill,
  Status,
  StepStatus,
  Task,
  Token,
  UsageReport,
  VectorDocument,
  VectorResult,
  VectorSpace,
  Viewer,
} from './types';
import type { components } from './api-types.gen';

type Body = components['schemas'];
/** An answer to a question: text, a choice among its options, or its form's fields. */
export type Answer = Pick<Body['RespondRequest'], 'response' | 'choice' | 'data'>;
export type WaitingFor = Body['WaitingFor'];

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
  /** The platform token; '' for a team mode session (the cookie is the credential). */
  token: string;
  viewer: Viewer;
  desktop: boolean;
  /** Where the event stream lives (ws:// or wss://, no path). */
  wsBase: string;
  /** Signed in with the session cookie: a person's (team mode) or a token's (POST /api/session). */
  cookie?: boolean;
  /** The person (team mode sessions). */
  user?: MeUser;
  /** The person's projects and roles (team mode sessions). */
  memberships?: Membership[];
  /** The name of the project the session acts in. */
  projectName?: string;
}

/** GET /api/me's answer. */
export type Me = Body['Me'];
export type TaskCounts = Body['TaskCounts'];
/** A page of tasks: by status, after the id `after` (in the list's order), newest first with `desc`. */
export type TaskQuery = { status?: Status; after?: number; limit?: number; desc?: boolean; q?: string };
/** The default page of a task list. */
export const TASK_PAGE = 50;

function taskQuery(q: TaskQuery): string {
  const p = new URLSearchParams();
  if (q.status) p.set('status', q.status);
  p.set('limit', String(q.limit ?? TASK_PAGE));
  if (q.after) p.set('after_id', String(q.after));
  if (q.desc) p.set('order', 'desc');
  if (q.q) p.set('q', q.q);
  return p.toString();
}
export type MeUser = NonNullable<Me['user']>;
export type Membership = Me['memberships'][number];
/** GET /api/signin's answer: whether to offer "Sign in with <provider>". */
export type SignInOptions = Body['SignInOptions'];

const STORAGE_KEY = 'agentdesk.token';
/** The project a team mode session acts in, kept for the tab (and as the default of new tabs). */
const PROJECT_KEY = 'agentdesk.project';
let token = '';
/** Team mode: the session's X-CSRF-Token, and the project sent as X-Agentdesk-Project. */
let csrf = '';
let project = '';

declare global {
  interface Window {
    go?: {
      app?: {
        Desktop?: {
          Session?: () => Promise<{ token: string; serverURL: string }>;
          /** An operating system notification; a click comes back as the agentdesk:open event (lib/notify.ts). */
          Notify?: (title: string, body: string, path: string) => Promise<void>;
          /** Notify for a question with options: each is a button that answers it (app/binding.go). */
          NotifyQuestion?: (title: string, body: string, projectId: string, taskId: number, waitingVersion: number, options: string[]) => Promise<void>;
        };
      };
    };
    /** The Wails runtime, in the desktop window. */
    runtime?: { EventsOn?: (name: string, cb: (...data: unknown[]) => void) => () => void };
  }
}

export function currentToken(): string {
  return token;
}

function pageWsBase(): string {
  return location.origin.replace(/^http/, 'ws');
}

/** The session to start with: the desktop's, a token kept from earlier, the team mode cookie, or null (show the sign-in page). */
export async function restoreSession(): Promise<Session | null> {
  const desktop = window.go?.app?.Desktop?.Session;
  if (desktop) {
    const s = await desktop();
    token = s.token;
    const viewer = await fetchViewer();
    return { token, viewer, desktop: true, wsBase: s.serverURL.replace(/^http/, 'ws').replace(/\/$/, '') };
  }
  const kept = sessionStorage.getItem(STORAGE_KEY);
  if (kept) {
    token = kept;
    try {
      const viewer = await fetchViewer();
      return { token, viewer, desktop: false, wsBase: pageWsBase() };
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) throw e;
      sessionStorage.removeItem(STORAGE_KEY);
      token = '';
    }
  }
  // Only a browser holding a session cookie asks /api/me: without one, it would answer 401.
  const options = await signInOptions();
  const s = options.session ? await cookieSession(sessionStorage.getItem(PROJECT_KEY) ?? localStorage.getItem(PROJECT_KEY) ?? '') : null;
  bootOptions = s ? null : options;
  return s;
}

/**
 * Asks GET /api/me with the browser's session cookie (no token): a person's session
 * acts in projectId ('' = the person's first project; one they left falls back to it),
 * a token's in the token's project. null when there is no session.
 */
export async function cookieSession(projectId: string): Promise<Session | null> {
  const before = project;
  project = projectId;
  let me: Me;
  try {
    me = await rest<Me>('GET', '/api/me');
  } catch (e) {
    if (e instanceof ApiError && e.status === 403 && projectId) return cookieSession('');
    if (e instanceof ApiError && e.status === 401) {
      project = '';
      return null;
    }
    project = before; // e.g. the server is unreachable: stay where we were
    throw e;
  }
  if (me.via === 'token-session') {
    csrf = me.csrfToken ?? '';
    project = me.project.id;
    const viewer = await fetchViewer();
    return { token: '', viewer, desktop: false, wsBase: pageWsBase(), cookie: true, projectName: me.project.name };
  }
  if (me.via !== 'session' || !me.user) {
    project = '';
    return null;
  }
  csrf = me.csrfToken ?? '';
  project = me.project.id;
  sessionStorage.setItem(PROJECT_KEY, project);
  localStorage.setItem(PROJECT_KEY, project);
  return {
    token: '',
    viewer: { kind: 'user', name: me.user.name, projectId: me.project.id, scopes: me.scopes },
    desktop: false,
    wsBase: pageWsBase(),
    cookie: true,
    user: me.user,
    memberships: me.memberships,
    projectName: me.project.name,
  };
}

/** The answer restoreSession got, for the sign-in page it leads to (one request, not two). */
let bootOptions: SignInOptions | null = null;

/** What the sign-in page offers besides the token field, and whether a session cookie came. */
export async function signInOptions(): Promise<SignInOptions> {
  const kept = bootOptions;
  bootOptions = null;
  if (kept) return kept;
  try {
    return await rest<SignInOptions>('GET', '/api/signin');
  } catch {
    return { oidc: null, session: false }; // an older server: tokens only
  }
}

/**
 * Checks a platform token by trading it for a browser session (POST /api/session): its
 * cookie signs in new tabs and links too, and the page keeps no token.
 */
export async function signIn(value: string): Promise<Session> {
  const v = value.trim();
  if (!v) throw new ApiError('Paste a platform token (it starts with adk_).', 400, 'invalid_argument');
  token = v;
  try {
    await rest('POST', '/api/session');
  } finally {
    token = '';
  }
  const s = await cookieSession('');
  if (!s) throw new ApiError('This browser did not keep the session cookie: allow cookies for this site, then sign in again.', 401, 'unauthenticated');
  return s;
}

/**
 * Signs out. A token is forgotten; a session is ended on the server (POST /logout),
 * and the answer says where the browser goes next: the provider's sign-out page, or '/'.
 */
export async function signOut(s?: Session | null): Promise<string | null> {
  sessionStorage.removeItem(STORAGE_KEY);
  token = '';
  if (!s?.cookie) return null;
  let to = '/';
  try {
    const res = await fetch('/logout', { method: 'POST', headers: headers(false) });
    if (res.ok) to = ((await res.json()) as { redirect?: string }).redirect || '/';
  } catch {
    /* the server is gone: the cookie is useless anyway */
  }
  csrf = project = '';
  return to;
}

/** Forgets a session that the server ended (signed out elsewhere, removed, its token revoked). */
export function dropSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  token = csrf = project = '';
  bootOptions = null;
}

async function fetchViewer(): Promise<Viewer> {
  const d = await gql<{ viewer: Viewer }>('{ viewer { kind name scopes projectId } }');
  return d.viewer;
}

/** Sent on every HTTP request: the server's activity trail records the web UI as the interface (via ui). */
export const CLIENT_HEADER = 'X-Agentdesk-Client';

function headers(json: boolean): Record<string, string> {
  const h: Record<string, string> = { Accept: 'application/json', [CLIENT_HEADER]: 'web' };
  if (token) h.Authorization = 'Bearer ' + token;
  // Team mode: the session acts in the chosen project; its changes need the CSRF token.
  if (project) h['X-Agentdesk-Project'] = project;
  if (csrf) h['X-CSRF-Token'] = csrf;
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
export async function rest<T>(method: string, path: string, body?: unknown, init?: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      ...init,
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

/** GraphQL's request body limit (the server's graphql.MaxBodyBytes). */
export const GRAPHQL_MAX_BODY = 1 << 20;

/** A GraphQL call over XMLHttpRequest, for large bodies: onProgress gets the share of the body sent (0 to 1). */
export function gqlWithProgress<T>(query: string, variables: Record<string, unknown>, onProgress: (f: number) => void): Promise<T> {
  return new Promise((ok, fail) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/graphql');
    for (const [k, v] of Object.entries(headers(true))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => fail(new ApiError('The server cannot be reached. Is agentdesk running?', 0, 'unavailable'));
    xhr.onload = () => {
      let body: any;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        return fail(new ApiError(`${xhr.status} ${xhr.statusText}`.trim(), xhr.status, 'internal'));
      }
      if (body?.errors?.length) {
        const e = body.errors[0];
        return fail(new ApiError(e.message, xhr.status, e.extensions?.code ?? 'internal'));
      }
      if (xhr.status >= 400) return fail(new ApiError(body?.error?.message ?? `${xhr.status} ${xhr.statusText}`, xhr.status, body?.error?.code ?? 'internal'));
      onProgress(1);
      ok(body.data as T);
    };
    xhr.send(JSON.stringify({ query, variables }));
  });
}

export function eventsURL(s: Session, since: number | null): string {
  // A browser cannot set headers on a WebSocket: the token, or for a session (its cookie
  // goes along) the project, ride in the query.
  const q = new URLSearchParams(s.cookie ? { project_id: s.viewer.projectId } : { access_token: s.token });
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

const REMOTEAGENT = 'agent { id name } cardUrl name description url streaming credentialKind skills { id name description }';
const MAILSEND = 'id taskId waitingVersion recipient status attempts lastError nextAttemptAt sentAt createdAt';
const WEBHOOK = 'id url events description enabled cursor attempts failingSince nextAttemptAt disabledReason createdAt updatedAt';
const DELIVERY = 'id webhookId seq eventType attempt ok status durationMs response error at';
const JOB = 'id name cron timezone summary details steps agentId skill catchUp paused lastRunAt nextRunAt createdAt updatedAt';
const USAGE = 'inputTokens outputTokens costUsd reports';
const MEMBER = 'userId name email role isLocalOwner createdAt';
const SPACE = 'id name description documentCount chunkCount embedder dimensions agentIds createdAt';

const P = (s: Session) => `/api/projects/${encodeURIComponent(s.viewer.projectId)}`;

export const api = {
  /** One page of the task list (never the whole list: a project may hold a million tasks). */
  tasks: (q: TaskQuery = {}) => rest<Task[]>('GET', '/api/tasks?' + taskQuery(q)),
  /** The number of tasks per status: all, or those a search finds, or an agent's. */
  taskCounts: (q = '', agentId?: number) => {
    const p = new URLSearchParams();
    if (q) p.set('q', q);
    if (agentId !== undefined) p.set('agent_id', String(agentId));
    return rest<TaskCounts>('GET', '/api/tasks/counts' + (p.size ? '?' + p.toString().replace(/\+/g, '%20') : ''));
  },
  task: (id: number) => rest<Task>('GET', `/api/tasks/${id}`),
  /** One search over the project's tasks, messages and documents the caller may read, best first. */
  search: async (q: string, limit = 20) =>
    (await rest<{ results: SearchResult[] }>('GET', `/api/search?q=${encodeURIComponent(q)}&limit=${limit}`)).results,
  createTask: (t: NewTask) => rest<Task>('POST', '/api/tasks', t),
  setStatus: (id: number, status: Status) => rest<Task>('PUT', `/api/tasks/${id}/status`, { status } satisfies Body['SetStatusRequest']),
  setAgent: (id: number, agent_id: number | null) => rest<Task>('PUT', `/api/tasks/${id}/agent`, { agent_id } satisfies Body['SetAgentRequest']),
  setStep: (id: number, step: number, status: StepStatus) =>
    rest<Task>('PUT', `/api/tasks/${id}/steps/${step}/status`, { status } satisfies Body['SetStepStatusRequest']),
  /** Answers a question: with text, one of its options, or its form's data. */
  respond: (id: number, answer: Answer, waiting_version?: number) =>
    rest<Task>('POST', `/api/tasks/${id}/respond`, { ...answer, waiting_version } satisfies Body['RespondRequest']),
  /** Whom each Waiting task waits for, and whether it is the caller. */
  waitingFor: async () => (await rest<{ tasks: WaitingFor[] }>('GET', '/api/waiting-for')).tasks,
  /** A comment in the task's thread, whatever its status. */
  comment: (id: number, content: string) => rest<Task>('POST', `/api/tasks/${id}/comments`, { content } satisfies Body['CommentRequest']),
  /** keepalive: sent even as the page goes away (a delete still waiting for its Undo). */
  deleteTask: (id: number, keepalive = false) => rest<void>('DELETE', `/api/tasks/${id}`, undefined, keepalive ? { keepalive } : undefined),
  editTask: (id: number, change: Body['EditTaskRequest']) => rest<Task>('PATCH', `/api/tasks/${id}`, change),
  clearDone: () => rest<DeletedCount>('DELETE', '/api/tasks/done'),

  agents: () => gql<{ agents: Agent[] }>('{ agents { id name lastSeenAt skills { id name } } }').then((d) => d.agents),
  /** Only the agents' last contact, polled for online / last seen (nothing sends it as events). */
  agentsSeen: () => gql<{ agents: Pick<Agent, 'id' | 'lastSeenAt'>[] }>('{ agents { id lastSeenAt } }').then((d) => d.agents),
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
  /** The messages that mention the viewer, newest first. */
  mentions: (s: Session) => rest<Message[]>('GET', `${P(s)}/mentions?limit=50`),
  markRead: (s: Session, c: number, lastReadMessageId: number) => rest<void>('PUT', `${P(s)}/conversations/${c}/read`, { lastReadMessageId }),
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
  /** Who reacted how to these messages: one query, an alias per message. */
  reactionsOf: (messageIds: number[]) =>
    gql<Record<string, Reaction[]>>('{ ' + messageIds.map((id) => `m${id}: reactions(messageId: ${id}) { actor actorKind emoji messageId }`).join(' ') + ' }').then((d) =>
      Object.values(d).flat(),
    ),
  addReaction: (messageId: number, emoji: string) =>
    gql<{ addReaction: Pick<Message, 'id' | 'reactions'> }>('mutation($m: Int!, $e: String!) { addReaction(messageId: $m, emoji: $e) { id reactions { emoji count } } }', {
      m: messageId,
      e: emoji,
    }).then((d) => d.addReaction),
  removeReaction: (messageId: number, emoji: string) =>
    gql<{ removeReaction: Pick<Message, 'id' | 'reactions'> }>('mutation($m: Int!, $e: String!) { removeReaction(messageId: $m, emoji: $e) { id reactions { emoji count } } }', {
      m: messageId,
      e: emoji,
    }).then((d) => d.removeReaction),

  tokens: () =>
    gql<{ tokens: Token[] }>('{ tokens { id name type scopes hint createdAt lastUsedAt revokedAt expiresAt createdBy { id name email } } }').then((d) => d.tokens),
  createToken: (type: 'platform' | 'data', name: string, scopes: string[], expiresAt?: string) => {
    const m = type === 'data' ? 'createDataToken' : 'createPlatformToken';
    return gql<Record<string, Token>>(
      `mutation($n: String!, $s: [String!]!, $e: String) { t: ${m}(name: $n, scopes: $s, expiresAt: $e) { id name type scopes hint createdAt lastUsedAt revokedAt expiresAt createdBy { id name email } token } }`,
      { n: name, s: scopes, e: expiresAt ?? null },
    ).then((d) => d.t);
  },
  revokeToken: (id: number) => gql<{ revokeToken: boolean }>('mutation($id: Int!) { revokeToken(id: $id) }', { id }),
  rotateToken: (id: number) =>
    gql<{ rotateToken: Token }>('mutation($id: Int!) { rotateToken(id: $id) { id name type scopes hint createdAt lastUsedAt revokedAt createdBy { id name email } token } }', {
      id,
    }).then((d) => d.rotateToken),

  // ---- skills ----
  skills: () => gql<{ skills: Skill[] }>('{ skills { id name description } }').then((d) => d.skills),
  createSkill: (name: string, description?: string) =>
    gql<{ createSkill: Skill }>('mutation($n: String!, $d: String) { createSkill(name: $n, description: $d) { id name description } }', {
      n: name,
      d: description || undefined,
    }).then((d) => d.createSkill),
  updateSkill: (id: number, name: string, description: string) =>
    gql<{ updateSkill: Skill }>('mutation($id: Int!, $n: String, $d: String) { updateSkill(id: $id, name: $n, description: $d) { id name description } }', {
      id,
      n: name,
      d: description,
    }).then((d) => d.updateSkill),
  deleteSkill: (id: number) => gql<{ deleteSkill: boolean }>('mutation($id: Int!) { deleteSkill(id: $id) }', { id }),
  attachSkill: (agentId: number, skillId: number) =>
    gql<{ a: Agent }>('mutation($a: Int!, $s: Int!) { a: attachSkill(agentId: $a, skillId: $s) { id name skills { id name } } }', { a: agentId, s: skillId }).then(
      (d) => d.a,
    ),
  detachSkill: (agentId: number, skillId: number) =>
    gql<{ a: Agent }>('mutation($a: Int!, $s: Int!) { a: detachSkill(agentId: $a, skillId: $s) { id name skills { id name } } }', { a: agentId, s: skillId }).then(
      (d) => d.a,
    ),

  // ---- jobs ----
  jobs: () => gql<{ jobs: Job[] }>(`{ jobs { ${JOB} } }`).then((d) => d.jobs),
  jobRuns: (jobId: number, first = 20, before?: number) =>
    gql<{ jobRuns: JobRun[] }>(
      'query($j: Int!, $f: Int, $b: Int) { jobRuns(jobId: $j, first: $f, before: $b) { id jobId scheduledFor ranAt outcome trigger taskId reason } }',
      { j: jobId, f: first, b: before },
    ).then((d) => d.jobRuns),
  createJob: (v: Record<string, unknown>) =>
    gql<{ j: Job }>(
      `mutation($name: String!, $cron: String!, $timezone: String, $summary: String!, $details: String, $steps: [String!], $agentId: Int, $skill: String, $catchUp: CatchUpPolicy) {
        j: createJob(name: $name, cron: $cron, timezone: $timezone, summary: $summary, details: $details, steps: $steps, agentId: $agentId, skill: $skill, catchUp: $catchUp) { ${JOB} } }`,
      v,
    ).then((d) => d.j),
  updateJob: (v: Record<string, unknown>) =>
    gql<{ j: Job }>(
      `mutation($id: Int!, $name: String, $cron: String, $timezone: String, $summary: String, $details: String, $steps: [String!], $agentId: Int, $skill: String, $catchUp: CatchUpPolicy, $unassign: Boolean) {
        j: updateJob(id: $id, name: $name, cron: $cron, timezone: $timezone, summary: $summary, details: $details, steps: $steps, agentId: $agentId, skill: $skill, catchUp: $catchUp, unassign: $unassign) { ${JOB} } }`,
      v,
    ).then((d) => d.j),
  deleteJob: (id: number) => gql<{ deleteJob: boolean }>('mutation($id: Int!) { deleteJob(id: $id) }', { id }),
  pauseJob: (id: number) => gql<{ j: Job }>(`mutation($id: Int!) { j: pauseJob(id: $id) { ${JOB} } }`, { id }).then((d) => d.j),
  resumeJob: (id: number) => gql<{ j: Job }>(`mutation($id: Int!) { j: resumeJob(id: $id) { ${JOB} } }`, { id }).then((d) => d.j),
  runJobNow: (id: number) =>
    gql<{ r: JobRun }>('mutation($id: Int!) { r: runJobNow(id: $id) { id jobId scheduledFor ranAt outcome trigger taskId reason } }', { id }).then((d) => d.r),

  // ---- usage and budget ----
  usage: (from: string, to: string) =>
    gql<{ usage: UsageReport }>(
      `query($f: String!, $t: String!) { usage(from: $f, to: $t) { from to total { ${USAGE} } byDay { day ${USAGE} } byAgent { agentId agentName ${USAGE} } byModel { model ${USAGE} } } }`,
      { f: from, t: to },
    ).then((d) => d.usage),
  budget: () => gql<{ budget: Budget }>('{ budget { monthlyUsd month spentUsd exceeded } }').then((d) => d.budget),
  setBudget: (monthlyUsd: number | null) =>
    gql<{ setBudget: Budget }>('mutation($m: Float) { setBudget(monthlyUsd: $m) { monthlyUsd month spentUsd exceeded } }', { m: monthlyUsd }).then(
      (d) => d.setBudget,
    ),

  // ---- activity ----
  activity: (vars: Record<string, unknown>) =>
    gql<{ activity: ActivityEntry[] }>(
      `query($first: Int, $before: Int, $objectType: String, $objectId: String, $actor: String, $via: String, $since: String, $until: String) {
        activity(first: $first, before: $before, objectType: $objectType, objectId: $objectId, actor: $actor, via: $via, since: $since, until: $until) { id at actorKind actor via action objectType objectId change } }`,
      vars,
    ).then((d) => d.activity),

  // ---- knowledge bases (GraphQL: the UI's platform token has admin; REST /api/vector takes data tokens only) ----
  spaces: () => gql<{ vectorSpaces: VectorSpace[] }>(`{ vectorSpaces { ${SPACE} } }`).then((d) => d.vectorSpaces),
  createSpace: (name: string, description?: string) =>
    gql<{ s: VectorSpace }>(`mutation($n: String!, $d: String) { s: createVectorSpace(name: $n, description: $d) { ${SPACE} } }`, {
      n: name,
      d: description || undefined,
    }).then((d) => d.s),
  deleteSpace: (id: number) => gql<{ deleteVectorSpace: boolean }>('mutation($id: Int!) { deleteVectorSpace(id: $id) }', { id }),
  vectorDocuments: (spaceId: number) =>
    gql<{ vectorDocuments: VectorDocument[] }>('query($s: Int!) { vectorDocuments(spaceId: $s) { id spaceId name mimeType size chunkCount createdAt } }', {
      s: spaceId,
    }).then((d) => d.vectorDocuments),
  addVectorDocument: (spaceId: number, name: string, text: string, onProgress: (f: number) => void = () => {}) =>
    gqlWithProgress<{ d: VectorDocument }>(
      'mutation($s: Int!, $n: String!, $t: String!) { d: addVectorDocument(spaceId: $s, name: $n, text: $t) { id spaceId name mimeType size chunkCount createdAt } }',
      { s: spaceId, n: name, t: text },
      onProgress,
    ).then((d) => d.d),
  deleteVectorDocument: (spaceId: number, id: number) =>
    gql<{ deleteVectorDocument: boolean }>('mutation($s: Int!, $id: Int!) { deleteVectorDocument(spaceId: $s, id: $id) }', { s: spaceId, id }),
  vectorSearch: (spaceId: number, query: string, mode: string, k = 10) =>
    gql<{ vectorSearch: VectorResult[] }>(
      'query($s: Int!, $q: String, $m: String, $k: Int) { vectorSearch(spaceId: $s, query: $q, mode: $m, k: $k) { documentId documentName chunkId chunkIndex chunk score similarity } }',
      { s: spaceId, q: query, m: mode, k },
    ).then((d) => d.vectorSearch),
  linkSpace: (spaceId: number, agentId: number) =>
    gql<{ s: VectorSpace }>(`mutation($s: Int!, $a: Int!) { s: linkSpaceToAgent(spaceId: $s, agentId: $a) { ${SPACE} } }`, { s: spaceId, a: agentId }).then(
      (d) => d.s,
    ),
  unlinkSpace: (spaceId: number, agentId: number) =>
    gql<{ s: VectorSpace }>(`mutation($s: Int!, $a: Int!) { s: unlinkSpaceFromAgent(spaceId: $s, agentId: $a) { ${SPACE} } }`, { s: spaceId, a: agentId }).then(
      (d) => d.s,
    ),

  about: () => rest<About>('GET', '/api/about'),

  // ---- team mode: members (admin) and the person's own sessions ----
  members: () => gql<{ members: Member[] }>(`{ members { ${MEMBER} } }`).then((d) => d.members),
  addMember: (email: string, role: Role) =>
    gql<{ m: Member }>(`mutation($e: String!, $r: MemberRole!) { m: addMember(email: $e, role: $r) { ${MEMBER} } }`, { e: email, r: role }).then((d) => d.m),
  setMemberRole: (userId: number, role: Role) =>
    gql<{ m: Member }>(`mutation($u: Int!, $r: MemberRole!) { m: setMemberRole(userId: $u, role: $r) { ${MEMBER} } }`, { u: userId, r: role }).then((d) => d.m),
  removeMember: (userId: number) => gql<{ removeMember: boolean }>('mutation($u: Int!) { removeMember(userId: $u) }', { u: userId }),
  mySessions: () => rest<{ sessions: BrowserSession[] }>('GET', '/api/me/sessions').then((d) => d.sessions),
  endMySession: (id: number) => rest<void>('DELETE', `/api/me/sessions/${encodeURIComponent(String(id))}`),
  endAllMySessions: () => rest<void>('DELETE', '/api/me/sessions'),

  // ---- remote A2A agents ----
  remoteAgents: () => gql<{ remoteAgents: RemoteAgent[] }>(`{ remoteAgents { ${REMOTEAGENT} } }`).then((d) => d.remoteAgents),
  /** Fetches the card at cardUrl and registers the agent it describes (admin). */
  registerRemoteAgent: (name: string, cardUrl: string, credentialKind: string, credential: string) =>
    gql<{ r: RemoteAgent }>(
      `mutation($n: String!, $u: String!, $k: String, $c: String) { r: registerRemoteAgent(name: $n, cardUrl: $u, credentialKind: $k, credential: $c) { ${REMOTEAGENT} } }`,
      { n: name, u: cardUrl, k: credentialKind || null, c: credential || null },
    ).then((d) => d.r),

  // ---- webhooks (admin) ----
  webhooks: () => gql<{ webhooks: Webhook[] }>(`{ webhooks { ${WEBHOOK} } }`).then((d) => d.webhooks),
  /** The new webhook with its signing secret, which no other answer shows. */
  createWebhook: (url: string, events: string[], description: string) =>
    gql<{ w: Webhook }>(
      `mutation($u: String!, $e: [String!], $d: String) { w: createWebhook(url: $u, events: $e, description: $d) { ${WEBHOOK} secret } }`,
      { u: url, e: events, d: description },
    ).then((d) => d.w),
  setWebhookEnabled: (id: number, enabled: boolean) =>
    gql<{ w: Webhook }>(`mutation($id: Int!, $on: Boolean) { w: updateWebhook(id: $id, enabled: $on) { ${WEBHOOK} } }`, { id, on: enabled }).then((d) => d.w),
  deleteWebhook: (id: number) => gql<{ deleteWebhook: boolean }>('mutation($id: Int!) { deleteWebhook(id: $id) }', { id }),
  webhookDeliveries: (webhookId: number, first = 50) =>
    gql<{ webhookDeliveries: WebhookDelivery[] }>(`query($w: Int!, $f: Int) { webhookDeliveries(webhookId: $w, first: $f) { ${DELIVERY} } }`, {
      w: webhookId,
      f: first,
    }).then((d) => d.webhookDeliveries),
  redeliver: (deliveryId: number) =>
    gql<{ d: WebhookDelivery }>(`mutation($id: Int!) { d: redeliver(deliveryId: $id) { ${DELIVERY} } }`, { id: deliveryId }).then((d) => d.d),
  // ---- question emails (admin; docs/email.md) ----
  mailSends: (first = 20) =>
    gql<{ mailSends: MailSend[] }>(`query($f: Int) { mailSends(first: $f) { ${MAILSEND} } }`, { f: first }).then((d) => d.mailSends),
  /** Sends a webhook.test event to this webhook only; its seq. */
  testWebhook: (id: number) => gql<{ testWebhook: number }>('mutation($id: Int!) { testWebhook(id: $id) }', { id }).then((d) => d.testWebhook),
};
