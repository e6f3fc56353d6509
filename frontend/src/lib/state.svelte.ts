// The application's state, kept live from the event stream. Screens read it and call
// its actions; every action goes through api.ts and applies the server's answer.
import { api, TASK_PAGE, type Answer, type Session, type WaitingFor } from './api';
import type {
  Agent,
  Conversation,
  DocumentInfo,
  Member,
  Message,
  NewTask,
  Participant,
  ParticipantEvent,
  ReactionEvent,
  Skill,
  Status,
  StepStatus,
  StreamEvent,
  Task,
  TaskEvent,
} from './types';
import { STATUSES, waitingText } from './types';
import { firstUnreadId, readTo, withMessage } from './unread';
import type { ConnState } from './events';
import type { Mentionable } from './mentions';

function newer(a: Task | undefined, b: Task): boolean {
  if (!a) return true;
  if (!a.updated_at || !b.updated_at) return true;
  return b.updated_at >= a.updated_at;
}

/** `t`, with the conversation `prev` knew: list answers and events may leave it out. */
function keepConversation(prev: Task | undefined, t: Task): Task {
  return prev?.conversation && !t.conversation ? { ...t, conversation: prev.conversation } : t;
}

/**
 * The task a task.created or task.updated event brings, given the task shown before it:
 * events carry only the entries a change added (`appended`), so they join the
 * conversation already shown. A task shown in that very state (the answer to the request
 * that made the change came first) has them already; a task shown without its
 * conversation stays without one (the detail pane loads it whole).
 */
export function taskFromEvent(prev: Task | undefined, d: TaskEvent): Task {
  const { appended = [], ...t } = d;
  if (t.conversation || !prev?.conversation) return t; // an event stored before events stayed small carries it whole
  if (prev.updated_at === t.updated_at) return { ...t, conversation: prev.conversation };
  return { ...t, conversation: [...prev.conversation, ...appended] };
}

/** Per status: how many tasks the project has in it (the server's counts, kept live). */
export type Counts = Record<Status, number>;
/** Per status: where the column's paging stands. `after` is the last id of the last page read. */
export type Column = { after: number; more: boolean; loading: boolean };

const zeroCounts = (): Counts => ({ Backlog: 0, Todo: 0, Doing: 0, Waiting: 0, Done: 0, Failed: 0 });
const freshColumns = (): Record<Status, Column> =>
  Object.fromEntries(STATUSES.map((s) => [s, { after: 0, more: false, loading: false }])) as Record<Status, Column>;
/** The words of a search as the server splits them: runs of letters and digits, lower case, accents removed. */
export function searchWords(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** Whether a task holds every word of a search by prefix (the server's rule for ?q=): for tasks that events bring during a search. */
export function matchesSearch(t: Task, q: string): boolean {
  const have = searchWords(t.summary + ' ' + (t.details ?? ''));
  return searchWords(q).every((w) => have.some((h) => h.startsWith(w)));
}

/** Per column, whether it shows the newest task first: the person's choice, kept for the browser. */
export type ColumnOrder = Record<Status, boolean>;
export const ORDER_KEY = 'agentdesk.board.newestFirst';

/** The kept order; until a person chooses, Done shows the newest first and the other columns the oldest (work order). */
export function loadOrder(): ColumnOrder {
  const order = Object.fromEntries(STATUSES.map((s) => [s, s === 'Done'])) as ColumnOrder;
  try {
    const kept = JSON.parse(localStorage.getItem(ORDER_KEY) ?? '{}');
    for (const s of STATUSES) if (typeof kept?.[s] === 'boolean') order[s] = kept[s];
  } catch {
    /* unreadable: the defaults */
  }
  return order;
}

export class AppState {
  session = $state.raw<Session | null>(null);
  /**
   * The tasks loaded so far, by id: each column's pages, and the tasks events brought.
   * Never the whole project (it may hold a million). Replaced (not mutated) on each
   * change so that the board re-renders only what changed.
   */
  tasks = $state.raw<Map<number, Task>>(new Map());
  tasksLoaded = $state(false);
  /** The number of tasks in each status, loaded tasks or not. */
  counts = $state.raw<Counts>(zeroCounts());
  total = $derived(STATUSES.reduce((n, s) => n + this.counts[s], 0));
  /** Each column's paging. */
  columns = $state.raw<Record<Status, Column>>(freshColumns());
  /** Each column's order (setNewestFirst changes it). */
  newestFirst = $state.raw<ColumnOrder>(loadOrder());
  /** The task open in the detail pane: kept when the board loads again, even if no first page holds it (a link to it). */
  openTaskId = $state<number | null>(null);
  /** The task this page just created: the board scrolls to it and marks it. */
  justCreated = $state<number | null>(null);
  /** Per agent, the number of its tasks in each status (the Agents screen loads them: loadAgentCounts). */
  agentCounts = $state.raw<Map<number, Counts>>(new Map());
  private agentCountsTimer: ReturnType<typeof setTimeout> | null = null;
  /** The board's search ('' for none): the counts and columns are the server's answer to it. */
  query = $state('');
  private boardLoads = 0;
  /** Task events that came while the board loads (null: not loading). */
  private boardPending: StreamEvent[] | null = null;
  agents = $state.raw<Agent[]>([]);
  conversations = $state.raw<Conversation[]>([]);
  conversationsLoaded = $state(false);
  /** The project's members: with the agents, whom a message can mention (@name). */
  members = $state.raw<Member[]>([]);
  mentionables = $derived<Mentionable[]>([
    ...this.agents.map((a) => ({ kind: 'agent' as const, name: a.name })),
    ...this.members.map((m) => ({ kind: 'user' as const, name: m.name, alias: m.email?.split('@')[0] })),
  ]);
  /** The messages that mention the viewer, newest first (the server decides whom a message mentions). */
  mentions = $state.raw<Message[]>([]);
  mentionsLoaded = $state(false);
  /** Called when a new message mentions the viewer (the notification). */
  onMentioned: (m: Message) => void = () => {};
  conn = $state<ConnState>('connecting');
  /** The conversation on screen (null: none) and what the Conversations screen shows of it. */
  threadId = $state<number | null>(null);
  thread = $state.raw<Message[]>([]);
  threadLoading = $state(false);
  /** The thread's side panels; null while loading. */
  participants = $state.raw<Participant[] | null>(null);
  documents = $state.raw<DocumentInfo[] | null>(null);
  linkedTasks = $state.raw<Task[] | null>(null);
  /** The viewer's own reactions in the thread, as `messageId:emoji`, so that a chip toggles. */
  myReactions = $state.raw<Set<string>>(new Set());
  /** The first message that was unread when the thread opened: the "New" line goes before it (null: none). */
  threadNewFrom = $state<number | null>(null);
  private threadNewKnown = false;
  /** The project's skills (task:read). */
  skills = $state.raw<Skill[]>([]);
  /** Set by a budget.exceeded event: the banner says it until dismissed. */
  budgetNotice = $state<string>('');

  /** Screens that follow events of their own (jobs, usage, knowledge) listen here. */
  private listeners = new Set<(e: StreamEvent) => void>();
  listen(fn: (e: StreamEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  byStatus = $derived.by(() => {
    const cols: Record<Status, Task[]> = { Backlog: [], Todo: [], Doing: [], Waiting: [], Done: [], Failed: [] };
    for (const t of this.tasks.values()) (cols[t.status] ?? cols.Backlog).push(t);
    for (const st of STATUSES) cols[st].sort(this.newestFirst[st] ? (a, b) => b.id - a.id : (a, b) => a.id - b.id);
    return cols;
  });
  waiting = $derived(this.byStatus.Waiting);
  /** Whom each Waiting task waits for (GET /api/waiting-for), by task id: loadWaitingFor fills it. */
  waitingFor = $state(new Map<number, WaitingFor>());

  /** Reads whom the Waiting tasks wait for; a failure leaves what was known (the questions still show). */
  async loadWaitingFor(): Promise<void> {
    if (!this.can('task:read')) return;
    try {
      const list = await api.waitingFor();
      this.waitingFor = new Map((Array.isArray(list) ? list : []).map((w) => [w.id, w]));
    } catch {
      // keep the last answer
    }
  }

  /** Called when a task enters Waiting (the notification). */
  onWaiting: (t: Task) => void = () => {};
  /** After the server took a move (the UI offers Undo). */
  onMoved?: (id: number, from: Status, to: Status) => void;

  can(scope: string): boolean {
    return !!this.session?.viewer.scopes.includes(scope);
  }

  // ---- loading ----

  async loadAll(): Promise<void> {
    const jobs: Promise<unknown>[] = [];
    if (this.can('task:read')) {
      jobs.push(this.loadBoard());
      jobs.push(api.agents().then((a) => (this.agents = a)));
      jobs.push(api.skills().then((s) => (this.skills = s)));
    }
    if (this.can('messaging:read') && this.session) {
      jobs.push(
        api.conversations(this.session).then((c) => {
          this.conversations = c;
          this.conversationsLoaded = true;
        }),
      );
      if (this.threadId !== null) jobs.push(this.openThread(this.threadId));
      jobs.push(api.members().then((m) => (this.members = m)));
      jobs.push(this.loadMentions());
    }
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) throw failed.reason;
  }

  // ---- tasks ----

  /**
   * The counts and each column's first page, in parallel (seven small requests, whatever
   * the project's size). Loaded again after a reconnect: what was loaded beyond the first
   * pages is dropped, and events fill the rest.
   */
  async loadBoard(): Promise<void> {
    const q = this.query;
    const mine = ++this.boardLoads;
    this.boardPending ??= [];
    let counts: Awaited<ReturnType<typeof api.taskCounts>>, pages: Task[][];
    try {
      [counts, ...pages] = await Promise.all([api.taskCounts(q), ...STATUSES.map((st) => api.tasks({ status: st, desc: this.newestFirst[st], q }))]);
    } catch (e) {
      if (mine === this.boardLoads) this.boardPending = null;
      throw e;
    }
    if (mine !== this.boardLoads) return; // a newer search (or reload) is on its way
    const m = new Map<number, Task>();
    const cols = freshColumns();
    STATUSES.forEach((st, i) => {
      for (const t of pages[i]) {
        const cur = this.tasks.get(t.id);
        // Keep the object already shown when nothing changed: its card is not redrawn.
        const same = cur && cur.updated_at !== undefined && cur.updated_at === t.updated_at && cur.status === t.status;
        m.set(t.id, cur && (same || !newer(cur, t)) ? cur : t);
      }
      cols[st] = { after: pages[i].at(-1)?.id ?? 0, more: pages[i].length === TASK_PAGE, loading: false };
    });
    // The answers may predate events that came while they loaded (a task made a moment
    // after its list was read): those events again, on top.
    const open = this.openTaskId === null ? undefined : this.tasks.get(this.openTaskId);
    if (open && !m.has(open.id) && (!q || matchesSearch(open, q))) m.set(open.id, open);
    const pending = this.boardPending ?? [];
    this.boardPending = null;
    for (const e of pending) {
      if (e.type === 'task.deleted') {
        m.delete(e.data.id);
        continue;
      }
      const t = taskFromEvent(m.get(e.data.id), e.data);
      if (!this.moving.has(t.id) && (!q || matchesSearch(t, q)) && newer(m.get(t.id), t)) m.set(t.id, t);
    }
    if (pending.length) this.refreshCounts(); // whether the counts' answer saw them is unknown
    this.tasks = m;
    this.counts = { ...zeroCounts(), ...pickCounts(counts) };
    this.columns = cols;
    this.tasksLoaded = true;
  }

  /** Each agent's counts again, a moment after the last call (the Agents screen calls it as tasks change). */
  loadAgentCounts(): void {
    if (this.agentCountsTimer) return;
    this.agentCountsTimer = setTimeout(async () => {
      this.agentCountsTimer = null;
      const agents = this.agents;
      const all = await Promise.all(agents.map((a) => api.taskCounts('', a.id).catch(() => null)));
      const m = new Map<number, Counts>();
      agents.forEach((a, i) => m.set(a.id, { ...zeroCounts(), ...pickCounts(all[i] ?? {}) }));
      this.agentCounts = m;
    }, 100);
  }

  /** Searches the board on the server: the counts and the columns' first pages again, for q. */
  async search(q: string): Promise<void> {
    q = searchWords(q).length ? q.trim() : '';
    if (q === this.query) return;
    this.query = q;
    await this.loadBoard();
  }

  /** Shows a column newest first (or oldest first), remembered for this browser, and loads its pages again in that order. */
  async setNewestFirst(st: Status, newest: boolean): Promise<void> {
    if (this.newestFirst[st] === newest) return;
    this.newestFirst = { ...this.newestFirst, [st]: newest };
    localStorage.setItem(ORDER_KEY, JSON.stringify(this.newestFirst));
    await this.loadBoard();
  }

  /** The next page of a column (the board calls it when the column's end scrolls into view). */
  async loadMore(st: Status): Promise<void> {
    const col = this.columns[st];
    if (!col.more || col.loading) return;
    const loading = { ...col, loading: true };
    this.columns = { ...this.columns, [st]: loading };
    let page: Task[];
    try {
      page = await api.tasks({ status: st, after: col.after, desc: this.newestFirst[st], q: this.query });
    } catch (e) {
      if (this.columns[st] === loading) this.columns = { ...this.columns, [st]: col };
      throw e;
    }
    if (this.columns[st] !== loading) return; // the board was loaded again meanwhile (a search, a reconnect)
    const m = new Map(this.tasks);
    for (const t of page) {
      const cur = m.get(t.id);
      if (this.moving.has(t.id) || !newer(cur, t)) continue;
      m.set(t.id, keepConversation(cur, t));
    }
    this.tasks = m;
    this.columns = { ...this.columns, [st]: { after: page.at(-1)?.id ?? col.after, more: page.length === TASK_PAGE, loading: false } };
  }

  /** A task leaves status `from` for `to` (either absent: it is new, or gone). */
  private shift(from: Status | undefined, to: Status | undefined): void {
    if (from === to) return;
    const c = { ...this.counts };
    if (from) c[from] = Math.max(0, c[from] - 1);
    if (to) c[to]++;
    this.counts = c;
  }

  /** The counts again from the server, once events settle: for a change to a task not loaded (its old status is unknown). */
  private countsTimer: ReturnType<typeof setTimeout> | null = null;
  private refreshCounts(): void {
    if (this.countsTimer) return;
    this.countsTimer = setTimeout(() => {
      this.countsTimer = null;
      const q = this.query;
      api
        .taskCounts(q)
        .then((c) => q === this.query && (this.counts = { ...zeroCounts(), ...pickCounts(c) }))
        .catch(() => {});
    }, 250);
  }

  /** Moves in flight, by task: the newest move's number. Answers and events of older states wait for it. */
  private moving = new Map<number, number>();
  private moveCount = 0;
  /** The last status request sent for each task: a task's moves reach the server one after another, in the order made. */
  private moveQueue = new Map<number, Promise<unknown>>();

  /** Shows a task's newest state; `created` says it is new to the project (its count goes up). */
  put(t: Task, fromMove = false, created = false): void {
    if (this.moving.has(t.id) && !fromMove) return; // the move in flight brings the newest state
    const prev = this.tasks.get(t.id);
    if (!newer(prev, t)) return;
    if (!prev && this.query && !matchesSearch(t, this.query)) return; // not what the board searches for
    if (prev) this.shift(prev.status, t.status);
    else if (created) this.shift(undefined, t.status);
    else this.refreshCounts(); // a task not loaded: where it was is unknown
    const m = new Map(this.tasks);
    t = keepConversation(prev, t);
    m.set(t.id, t);
    this.tasks = m;
    if (t.status === 'Waiting' && (prev?.status !== 'Waiting' || prev?.waiting_version !== t.waiting_version)) this.onWaiting(t);
  }

  remove(id: number): void {
    const prev = this.tasks.get(id);
    if (!prev) return this.refreshCounts();
    this.shift(prev.status, undefined);
    const m = new Map(this.tasks);
    m.delete(id);
    this.tasks = m;
  }

  /** Moves a task to another column: shown at once, undone if the server refuses. */
  async move(id: number, status: Status): Promise<void> {
    const t = this.tasks.get(id);
    if (!t || t.status === status) return;
    const m = new Map(this.tasks);
    m.set(id, { ...t, status });
    this.tasks = m;
    this.shift(t.status, status);
    const mine = ++this.moveCount;
    this.moving.set(id, mine);
    // Two quick moves (Shift+→ twice) sent at once could arrive in either order and
    // leave the task in the first column: each waits for the one before it.
    const request = (this.moveQueue.get(id) ?? Promise.resolve())
      .catch(() => {})
      .then(() => api.setStatus(id, status));
    this.moveQueue.set(id, request);
    try {
      const answer = await request;
      if (this.moving.get(id) === mine) {
        this.moving.delete(id);
        this.put(answer, true);
      }
      this.onMoved?.(id, t.status, status);
    } catch (e) {
      if (this.moving.get(id) === mine) {
        this.moving.delete(id);
        const back = new Map(this.tasks);
        this.shift(back.get(id)?.status, t.status);
        back.set(id, t);
        this.tasks = back;
      }
      throw e;
    } finally {
      if (this.moveQueue.get(id) === request) this.moveQueue.delete(id);
    }
  }

  /** The column before or after the task's, for keyboard moves. */
  neighbour(id: number, dir: -1 | 1): Status | null {
    const t = this.tasks.get(id);
    if (!t) return null;
    const i = STATUSES.indexOf(t.status) + dir;
    return i >= 0 && i < STATUSES.length ? STATUSES[i] : null;
  }

  /** Forgets everything (sign-out). */
  reset(): void {
    this.session = null;
    this.clearData();
  }

  /** Forgets the project's data (sign-out, or a switch to another project). */
  clearData(): void {
    this.agents = [];
    this.skills = [];
    this.budgetNotice = '';
    this.tasks = new Map();
    this.boardPending = null;
    this.tasksLoaded = false;
    this.counts = zeroCounts();
    this.columns = freshColumns();
    this.query = '';
    this.justCreated = null;
    this.openTaskId = null;
    this.agentCounts = new Map();
    this.conversations = [];
    this.conversationsLoaded = false;
    this.members = [];
    this.mentions = [];
    this.mentionsLoaded = false;
    this.closeThread();
  }

  async create(input: NewTask): Promise<Task> {
    const t = await api.createTask(input);
    this.put(t, false, true);
    this.justCreated = t.id;
    return t;
  }

  /** Answers t's question: text, or one of its options ({choice}), or its form ({data}). */
  async respond(t: Task, answer: string | Answer): Promise<Task> {
    const r = await api.respond(t.id, typeof answer === 'string' ? { response: answer } : answer, t.waiting_version);
    this.put(r);
    return r;
  }

  /** Adds a comment to a task's thread (any status); the task comes back with it. */
  async comment(id: number, text: string): Promise<void> {
    this.put(await api.comment(id, text));
  }

  async setStep(id: number, step: number, status: StepStatus): Promise<void> {
    this.put(await api.setStep(id, step, status));
  }

  /** A new summary, details or step titles (PATCH /api/tasks/{id}). */
  async edit(id: number, change: { summary?: string; details?: string; steps?: { title: string }[] }): Promise<void> {
    this.put(await api.editTask(id, change));
  }

  async assign(id: number, agent: number | null): Promise<void> {
    this.put(await api.setAgent(id, agent));
  }

  async delete(id: number): Promise<void> {
    await api.deleteTask(id);
    this.remove(id);
  }

  async clearDone(): Promise<number> {
    const r = await api.clearDone();
    const m = new Map(this.tasks);
    for (const [id, t] of m) if (t.status === 'Done') m.delete(id);
    this.tasks = m;
    this.counts = { ...this.counts, Done: 0 };
    this.columns = { ...this.columns, Done: { after: 0, more: false, loading: false } };
    return r.deleted;
  }

  async refreshTask(id: number): Promise<void> {
    // An event that overtakes the answer leaves a newer task without a conversation (it
    // carries only what its change added) and the answer is dropped as older: ask again.
    for (let tries = 0; tries < 3; tries++) {
      this.put(await api.task(id));
      const t = this.tasks.get(id);
      if (!t || t.conversation) return;
    }
  }

  // ---- events ----

  /** Agents and skills again (after a skill changed or moved between agents). */
  async reloadAgents(): Promise<void> {
    const [a, s] = await Promise.all([api.agents(), api.skills()]);
    this.agents = a;
    this.skills = s;
  }

  /** The agents' last contact again: it changes without events (online / last seen). */
  async refreshPresence(): Promise<void> {
    const seen = new Map((await api.agentsSeen()).map((a) => [a.id, a.lastSeenAt]));
    this.agents = this.agents.map((a) => (seen.has(a.id) ? { ...a, lastSeenAt: seen.get(a.id) } : a));
  }

  setAgent(a: Agent): void {
    this.agents = this.agents.map((x) => (x.id === a.id ? { ...x, ...a } : x));
  }

  apply(e: StreamEvent): void {
    const d = e.data ?? {};
    for (const fn of this.listeners) fn(e);
    switch (e.type) {
      case 'skill.created':
      case 'skill.updated':
      case 'skill.deleted':
      case 'agent.skill_added':
      case 'agent.skill_removed':
        this.reloadAgents().catch(() => {});
        break;
      case 'budget.exceeded':
        this.budgetNotice = `The monthly budget of $${Number(d.monthlyUsd ?? 0).toFixed(2)} is spent ($${Number(d.spentUsd ?? 0).toFixed(2)} used in ${d.month ?? 'this month'}): new tasks for agents stay in Backlog.`;
        break;
      case 'task.created':
      case 'task.updated':
        this.boardPending?.push(e);
        this.put(taskFromEvent(this.tasks.get(d.id), d), false, e.type === 'task.created');
        break;
      case 'task.deleted':
        this.boardPending?.push(e);
        this.remove(d.id);
        break;
      case 'agent.created':
        if (!this.agents.some((a) => a.id === d.id)) this.agents = [...this.agents, { id: d.id, name: d.name, skills: [] }];
        break;
      case 'agent.deleted':
        this.agents = this.agents.filter((a) => a.id !== d.id);
        break;
      case 'conversation.created':
        this.addConversation(d as Conversation);
        break;
      case 'message.created': {
        const m = d as Message;
        this.conversations = this.conversations.map((c) => (c.id === m.conversationId ? withMessage(c, m.id, this.isMe(m.authorType, m.author)) : c));
        if (m.mentions?.length && !this.isMe(m.authorType, m.author)) this.mentionedMaybe(m).catch(() => {});
        break;
      }
      case 'participant.added':
      case 'participant.removed': {
        const { conversationId, participant: p } = d as ParticipantEvent;
        this.conversations = this.conversations.map((c) => {
          if (c.id !== conversationId || !p?.name) return c;
          const others = c.participants.filter((n) => n !== p.name);
          return { ...c, participants: e.type === 'participant.added' ? [...others, p.name] : others };
        });
        break;
      }
    }
    if (this.view && this.isThreadEvent(e)) {
      if (this.view.loads) this.view.pending.push(e); // applied again on top of the answers in flight
      this.applyThreadEvent(e);
    }
  }

  // ---- mentions ----

  async loadMentions(): Promise<void> {
    if (!this.session) return;
    this.mentions = await api.mentions(this.session);
    this.mentionsLoaded = true;
  }

  /** A new message mentions someone: the server's list says whether it is the viewer (then the Inbox shows it, and onMentioned tells). */
  private async mentionedMaybe(m: Message): Promise<void> {
    const known = new Set(this.mentions.map((x) => x.id));
    await this.loadMentions();
    if (!known.has(m.id) && this.mentions.some((x) => x.id === m.id)) this.onMentioned(m);
  }

  // ---- conversations ----
  //
  // The list, and the one conversation on screen (the thread): its messages, participants,
  // documents, linked tasks and the viewer's own reactions, loaded when it opens and then
  // changed by events. An answer may be older than an event that came while it loaded, so
  // the thread's events are kept while any of its loads is in flight and applied again on
  // top of each answer (each of their changes can be applied twice without harm).

  /** The open thread's loads in flight and the events of the thread that came meanwhile. */
  private view: { id: number; loads: number; pending: StreamEvent[] } | null = null;

  /** Shows conversation `id` (again, after a reload): resolves once its messages are in; the side panels load beside. */
  async openThread(id: number): Promise<void> {
    const s = this.session;
    if (!s) return;
    if (this.view?.id !== id) {
      this.closeThread();
      this.view = { id, loads: 0, pending: [] };
      this.threadId = id;
    }
    const v = this.view!;
    const panel = <T>(fetch: () => Promise<T[]>, set: (x: T[]) => void, report: boolean) =>
      this.load(v, fetch, set).catch((e) => {
        if (this.view !== v) return;
        set([]);
        if (report) this.onError(e);
      });
    void panel(() => api.participants(id), (p) => (this.participants = p), true);
    void panel(() => api.documents(s, id), (d) => (this.documents = d), true);
    if (this.can('task:read')) void panel(() => api.linkedTasks(s, id), (t) => (this.linkedTasks = t), false);
    else this.linkedTasks = [];
    this.threadLoading = true;
    try {
      await this.load(v, () => api.messages(s, id), (m) => (this.thread = m));
      const reacted = this.thread.filter((m) => m.reactions.length > 0).map((m) => m.id);
      await this.load(
        v,
        () => (reacted.length ? api.reactionsOf(reacted) : Promise.resolve([])),
        (list) => (this.myReactions = new Set(list.filter((r) => this.isMe(r.actorKind, r.actor)).map((r) => `${r.messageId}:${r.emoji}`))),
      );
    } finally {
      if (this.view === v) this.threadLoading = false;
    }
  }

  closeThread(): void {
    this.view = null;
    this.threadId = null;
    this.thread = [];
    this.threadLoading = false;
    this.participants = this.documents = this.linkedTasks = null;
    this.myReactions = new Set();
    this.threadNewFrom = null;
    this.threadNewKnown = false;
  }

  /**
   * The viewer sees the open thread's end: their read marker moves to its last message
   * (PUT .../read), once. The first time, it notes where the "New" line goes.
   */
  async markThreadRead(): Promise<void> {
    const c = this.conversations.find((x) => x.id === this.threadId);
    const last = this.thread.at(-1);
    if (!this.session || !c || !last || this.threadLoading) return;
    if (!this.threadNewKnown) {
      this.threadNewKnown = true;
      this.threadNewFrom = c.unread ? firstUnreadId(this.thread, c.lastReadMessageId) : null;
    }
    const read = readTo(c, last.id);
    if (!read) return;
    this.conversations = this.conversations.map((x) => (x.id === c.id ? read : x));
    await api.markRead(this.session, c.id, last.id).catch((e) => this.onError(e));
  }

  /** One load for the open thread: its answer is applied, then the events that came while loads were in flight. */
  private async load<T>(v: NonNullable<AppState['view']>, fetch: () => Promise<T>, set: (x: T) => void): Promise<void> {
    v.loads++;
    try {
      const x = await fetch();
      if (this.view !== v) return;
      set(x);
      for (const e of v.pending) this.applyThreadEvent(e);
    } finally {
      if (--v.loads === 0) v.pending = [];
    }
  }

  /** Events that change the open thread: its messages, reactions, participants, documents, linked tasks. */
  private isThreadEvent(e: StreamEvent): boolean {
    const d = e.data ?? {};
    switch (e.type) {
      case 'message.created':
      case 'reaction.added':
      case 'reaction.removed':
      case 'participant.added':
      case 'participant.removed':
      case 'document.created':
        return d.conversationId === this.threadId;
      case 'task.created':
      case 'task.updated':
        return d.conversation_id === this.threadId;
      case 'task.deleted':
        return true;
      default:
        return false;
    }
  }

  private applyThreadEvent(e: StreamEvent): void {
    const d = e.data ?? {};
    switch (e.type) {
      case 'message.created':
        this.addMessage(d as Message);
        break;
      case 'reaction.added':
      case 'reaction.removed': {
        const r = d as ReactionEvent;
        this.setReactions(r.messageId, r.reactions ?? []);
        if (this.isMe(r.actorKind, r.actor)) this.markMine(`${r.messageId}:${r.emoji}`, e.type === 'reaction.added');
        break;
      }
      case 'participant.added':
      case 'participant.removed': {
        const p = (d as ParticipantEvent).participant;
        if (!this.participants || !p?.name) break;
        const others = this.participants.filter((x) => x.kind !== p.kind || x.name !== p.name);
        // The event carries REST's Participant: agentId is absent for users, where GraphQL says null.
        this.participants = e.type === 'participant.added' ? [...others, { kind: p.kind, name: p.name, agentId: p.agentId ?? null, createdAt: p.createdAt }] : others;
        break;
      }
      case 'document.created':
        this.addDocument(d as DocumentInfo);
        break;
      case 'task.created':
      case 'task.updated':
        this.linkTask(taskFromEvent(undefined, d));
        break;
      case 'task.deleted':
        this.unlinkTask(d.id);
        break;
    }
  }

  private isMe(actorKind: string, actor: string): boolean {
    return actorKind === 'user' && actor === this.session?.viewer.name;
  }

  /** Adds a message to the thread once, in id order. */
  private addMessage(m: Message): void {
    if (this.thread.some((x) => x.id === m.id)) return;
    this.thread = [...this.thread, m].sort((a, b) => a.id - b.id);
  }

  /** A new conversation joins the list; nothing in it is read yet (its first message's event counts it). */
  private addConversation(c: Conversation): void {
    if (!this.conversations.some((x) => x.id === c.id)) this.conversations = [...this.conversations, { ...c, lastReadMessageId: c.lastReadMessageId ?? 0, unread: c.unread ?? 0 }];
  }

  private addDocument(d: DocumentInfo): void {
    if (this.documents) this.documents = [...this.documents.filter((x) => x.id !== d.id), d];
  }

  private linkTask(t: Task): void {
    if (this.linkedTasks && t.conversation_id !== null && t.conversation_id === this.threadId && !this.linkedTasks.some((x) => x.id === t.id))
      this.linkedTasks = [...this.linkedTasks, t];
  }

  private unlinkTask(id: number): void {
    if (this.linkedTasks?.some((t) => t.id === id)) this.linkedTasks = this.linkedTasks.filter((t) => t.id !== id);
  }

  setReactions(messageId: number, reactions: Message['reactions']): void {
    this.thread = this.thread.map((m) => (m.id === messageId ? { ...m, reactions } : m));
  }

  private markMine(key: string, mine: boolean): void {
    if (this.myReactions.has(key) === mine) return;
    const next = new Set(this.myReactions);
    if (mine) next.add(key);
    else next.delete(key);
    this.myReactions = next;
  }

  /** Starts a conversation with its first message; it joins the list at once. */
  async startConversation(message: string, name?: string): Promise<Conversation> {
    if (!this.session) throw new Error('not signed in');
    const c = await api.createConversation(this.session, message, name);
    this.addConversation(c);
    return c;
  }

  /** Posts to the open thread; the message shows at once (its event then changes nothing). */
  async sendMessage(text: string): Promise<void> {
    const id = this.threadId;
    if (!this.session || id === null) return;
    const m = await api.postMessage(this.session, id, text);
    // The server moved the poster's read marker to their message.
    this.conversations = this.conversations.map((c) => (c.id === id ? withMessage(c, m.id, true) : c));
    if (this.threadId === id) this.addMessage(m);
  }

  /** Adds the viewer's reaction, or takes it back when it is theirs already. */
  async toggleReaction(messageId: number, emoji: string): Promise<void> {
    const key = `${messageId}:${emoji}`;
    const mine = this.myReactions.has(key);
    const m = mine ? await api.removeReaction(messageId, emoji) : await api.addReaction(messageId, emoji);
    this.setReactions(messageId, m.reactions);
    this.markMine(key, !mine);
  }

  async addParticipant(kind: string, name: string): Promise<void> {
    if (this.threadId === null) return;
    await api.addParticipant(this.threadId, kind, name);
    await this.reloadParticipants();
  }

  async removeParticipant(p: Participant): Promise<void> {
    if (this.threadId === null) return;
    await api.removeParticipant(this.threadId, p.kind, p.name);
    await this.reloadParticipants();
  }

  /** After a change of our own: the mutation answers names only, the panel shows kinds and ids too. */
  private async reloadParticipants(): Promise<void> {
    const v = this.view;
    if (v) await this.load(v, () => api.participants(v.id), (p) => (this.participants = p));
  }

  async shareDocument(file: File): Promise<DocumentInfo> {
    const id = this.threadId;
    if (!this.session || id === null) throw new Error('no conversation is open');
    const d = await api.upload(this.session, id, file);
    if (this.threadId === id) this.addDocument(d);
    return d;
  }

  /** Where the side panels' load failures go (the app shows them as toasts). */
  onError: (e: unknown) => void = () => {};
}

function pickCounts(c: Partial<Counts>): Partial<Counts> {
  const out: Partial<Counts> = {};
  for (const s of STATUSES) if (typeof c[s] === 'number') out[s] = c[s];
  return out;
}

export const app = new AppState();
export { waitingText };
