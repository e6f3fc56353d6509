export const STATUSES = ['Backlog', 'Todo', 'Doing', 'Waiting', 'Done', 'Failed'] as const;
export type Status = (typeof STATUSES)[number];
export const STEP_STATUSES = ['pending', 'in_progress', 'completed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface Step {
  id?: number;
  title: string;
  status: StepStatus;
}
export interface TaskMessage {
  role: string;
  content: string;
  created_at?: string;
}
export interface Task {
  id: number;
  agent_id: number | null;
  agent_name: string;
  summary: string;
  details: string;
  steps: Step[];
  status: Status;
  current_step_num: number;
  is_active: boolean;
  is_waiting: boolean;
  waiting_details?: string | null;
  waitingDetails?: string | null;
  waiting_version?: number;
  conversation?: TaskMessage[];
  created_at?: string;
  updated_at?: string;
  source?: string;
  taskType?: string;
  required_skills?: string[];
  blocked_reason?: string;
}
export interface Agent {
  id: number;
  name: string;
  /** Loaded by GraphQL (agents { skills { name } }); events leave it out. */
  skills?: { id?: number; name: string }[];
}
export interface Skill {
  id: number;
  name: string;
  description: string;
}
export type CatchUp = 'skip' | 'run_once';
export interface Job {
  id: number;
  name: string;
  cron: string;
  timezone: string;
  summary: string;
  details: string;
  steps: string[];
  agentId: number | null;
  skill: string | null;
  catchUp: CatchUp;
  paused: boolean;
  lastRunAt: string | null;
  nextRunAt: string | null;
  createdAt?: string;
  updatedAt?: string;
}
export interface JobRun {
  id: number;
  jobId: number;
  scheduledFor: string;
  ranAt: string;
  outcome: 'created' | 'failed' | 'skipped';
  trigger: 'schedule' | 'manual' | 'catch_up';
  taskId: number | null;
  reason: string;
}
export interface UsageRow {
  day?: string | null;
  agentId?: number | null;
  agentName?: string | null;
  model?: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  reports: number;
}
export interface UsageReport {
  from: string;
  to: string;
  total: UsageRow;
  byDay: UsageRow[];
  byAgent: UsageRow[];
  byModel: UsageRow[];
}
export interface Budget {
  monthlyUsd: number | null;
  month: string;
  spentUsd: number;
  exceeded: boolean;
}
export interface ActivityEntry {
  id: number;
  at: string;
  actorKind: string;
  actor: string;
  via: string;
  action: string;
  objectType: string;
  objectId: string;
}
export interface VectorSpace {
  id: number;
  name: string;
  description: string;
  documentCount: number;
  chunkCount: number;
  embedder: string;
  dimensions: number;
  agentIds: number[];
  createdAt: string;
}
export interface VectorDocument {
  id: number;
  spaceId: number;
  name: string;
  mimeType: string;
  size: number;
  chunkCount: number;
  createdAt: string;
}
export interface VectorResult {
  documentId: number;
  documentName: string;
  chunkId: number;
  chunkIndex: number;
  chunk: string;
  score: number;
  similarity: number | null;
}
export interface Viewer {
  kind: string;
  name: string;
  scopes: string[];
  projectId: string;
}
export interface Conversation {
  id: number;
  uuid?: string;
  projectId: string;
  name: string | null;
  participants: string[];
  createdAt: string;
}
export interface ReactionCount {
  emoji: string;
  count: number;
}
export interface Message {
  id: number;
  conversationId: number;
  author: string;
  authorType: string;
  content: string;
  createdAt: string;
  reactions: ReactionCount[];
}
export interface Participant {
  kind: string;
  name: string;
  agentId?: number | null;
  createdAt?: string;
}
export interface DocumentInfo {
  id: number;
  conversationId: number;
  name: string;
  mimeType: string;
  size: number;
  createdAt: string;
  url: string;
  uploadedBy?: string;
}
export interface Token {
  id: number;
  name: string;
  type: string;
  scopes: string[];
  hint: string;
  createdAt: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
  expiresAt?: string | null;
  token?: string | null;
}
export interface EnvVar {
  name: string;
  value: string;
}
export interface StreamEvent {
  seq: number;
  type: string;
  projectId: string;
  at: string;
  data: any;
}

/** The waiting question, whichever spelling the server used. */
export function waitingText(t: Task): string {
  return t.waiting_details ?? t.waitingDetails ?? '';
}
