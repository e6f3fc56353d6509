// The application's state, kept live from the event stream. Screens read it and call
// its actions; every action goes through api.ts and applies the server's answer.
import { api, type Session } from './api';
import type { Agent, Conversation, Message, NewTask, Skill, Status, StepStatus, StreamEvent, Task } from './types';
import { STATUSES, waitingText } from './types';
import type { ConnState } from './events';

function newer(a: Task | undefined, b: Task): boolean {
  if (!a) return true;
  if (!a.updated_at || !b.updated_at) return true;
  return b.updated_at >= a.updated_at;
}

export class AppState {
  session = $state.raw<Session | null>(null);
  /** Tasks by id; replaced (not mutated) on each change so that the board re-renders only what changed. */
  tasks = $state.raw<Map<number, Task>>(new Map());
  tasksLoaded = $state(false);
  agents = $state.raw<Agent[]>([]);
  conversations = $state.raw<Conversation[]>([]);
  conversationsLoaded = $state(false);
  conn = $state<ConnState>('connecting');
  /** Messages of the conversation on screen, and its id. */
  thread = $state.raw<Message[]>([]);
  threadId = $state<number | null>(null);
  /** Bumped when something of a conversation changed that the thread view reloads (participants, documents, links). */
  convTick = $state(0);
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
    return cols;
  });
  waiting = $derived(this.byStatus.Waiting);

  /** Called when a task enters Waiting (the notification). */
  onWaiting: (t: Task) => void = () => {};

  can(scope: string): boolean {
    return !!this.session?.viewer.scopes.includes(scope);
  }

  // ---- loading ----

  async loadAll(): Promise<void> {
    const jobs: Promise<unknown>[] = [];
    if (this.can('task:read')) {
      jobs.push(
        api.tasks().then((list) => {
          const m = new Map<number, Task>();
          for (const t of list) {
            const cur = this.tasks.get(t.id);
            // Keep the object already shown when nothing changed: its card is not redrawn.
            const same = cur && cur.updated_at !== undefined && cur.updated_at === t.updated_at && cur.status === t.status;
            m.set(t.id, cur && (same || !newer(cur, t)) ? cur : t);
          }
          this.tasks = m;
          this.tasksLoaded = true;
        }),
      );
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
    }
    const results = await Promise.allSettled(jobs);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) throw failed.reason;
  }

  async openThread(id: number): Promise<void> {
    if (!this.session) return;
    this.threadId = id;
    const msgs = await api.messages(this.session, id);
    if (this.threadId === id) this.thread = msgs;
  }

  // ---- tasks ----

  /** Moves in flight, by task: the newest move's number. Answers and events of older states wait for it. */
  private moving = new Map<number, number>();
  private moveCount = 0;

  put(t: Task, fromMove = false): void {
    if (this.moving.has(t.id) && !fromMove) return; // the move in flight brings the newest state
    const prev = this.tasks.get(t.id);
    if (!newer(prev, t)) return;
    const m = new Map(this.tasks);
    // List answers and events may leave out the conversation; keep what we know.
    if (prev?.conversation && !t.conversation) t = { ...t, conversation: prev.conversation };
    m.set(t.id, t);
    this.tasks = m;
    if (t.status === 'Waiting' && (prev?.status !== 'Waiting' || prev?.waiting_version !== t.waiting_version)) this.onWaiting(t);
  }

  remove(id: number): void {
    if (!this.tasks.has(id)) return;
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
    const mine = ++this.moveCount;
    this.moving.set(id, mine);
    try {
      const answer = await api.setStatus(id, status);
      if (this.moving.get(id) === mine) {
        this.moving.delete(id);
        this.put(answer, true);
      }
    } catch (e) {
      if (this.moving.get(id) === mine) {
        this.moving.delete(id);
        const back = new Map(this.tasks);
        back.set(id, t);
        this.tasks = back;
      }
      throw e;
    }
  }

  /** The column before or after the task's, for keyboard moves. */
  neighbour(id: number, dir: -1 | 1): Status | null {
    const t = this.tasks.get(id);
    if (!t) return null;
    const i = STATUSES.indexOf(t.status) + dir;
    return i >= 0 && i < STATUSES.length ? STATUSES[i] : null;
  }

  async create(input: NewTask): Promise<Task> {
    const t = await api.createTask(input);
    this.put(t);
    return t;
  }

  async respond(t: Task, text: string): Promise<Task> {
    const r = await api.respond(t.id, text, t.waiting_version);
    this.put(r);
    return r;
  }

  async setStep(id: number, step: number, status: StepStatus): Promise<void> {
    this.put(await api.setStep(id, step, status));
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
    return r.deleted;
  }

  async refreshTask(id: number): Promise<void> {
    this.put(await api.task(id));
  }

  // ---- events ----

  /** Agents and skills again (after a skill changed or moved between agents). */
  async reloadAgents(): Promise<void> {
    const [a, s] = await Promise.all([api.agents(), api.skills()]);
    this.agents = a;
    this.skills = s;
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
        this.put(d as Task);
        break;
      case 'task.deleted':
        this.remove(d.id);
        break;
      case 'agent.created':
        if (!this.agents.some((a) => a.id === d.id)) this.agents = [...this.agents, { id: d.id, name: d.name, skills: [] }];
        break;
      case 'agent.deleted':
        this.agents = this.agents.filter((a) => a.id !== d.id);
        break;
      case 'conversation.created':
        if (!this.conversations.some((c) => c.id === d.id)) this.conversations = [...this.conversations, d as Conversation];
        break;
      case 'message.created':
        if (d.conversationId === this.threadId && !this.thread.some((m) => m.id === d.id)) this.thread = [...this.thread, d as Message];
        break;
      case 'reaction.added':
      case 'reaction.removed':
        if (d.conversationId === this.threadId) this.setReactions(d.messageId, d.reactions ?? []);
        break;
      case 'participant.added':
      case 'participant.removed': {
        const name = d.participant?.name;
        this.conversations = this.conversations.map((c) => {
          if (c.id !== d.conversationId || !name) return c;
          const others = c.participants.filter((p) => p !== name);
          return { ...c, participants: e.type === 'participant.added' ? [...others, name] : others };
        });
        if (d.conversationId === this.threadId) this.convTick++;
        break;
      }
      case 'document.created':
        if (d.conversationId === this.threadId) this.convTick++;
        break;
    }
  }

  setReactions(messageId: number, reactions: Message['reactions']): void {
    this.thread = this.thread.map((m) => (m.id === messageId ? { ...m, reactions } : m));
  }
}

export const app = new AppState();
export { waitingText };
