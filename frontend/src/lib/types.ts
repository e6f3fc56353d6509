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
}
export interface Agent {
  id: number;
  name: string;
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
