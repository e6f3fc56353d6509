// The UI's names for the server's types. They come from the generated files (npm run gen):
// REST objects from backend/api/openapi.json, GraphQL objects from schema.graphql, picked
// down to the fields the UI's queries ask for. Only UI-only types are written here by hand.
import type { components } from './api-types.gen';
import type * as G from './graphql-types.gen';

type S = components['schemas'];

// ---- REST (and the event stream, whose frames carry the REST objects) ----

export type Status = S['TaskStatus'];
export type StepStatus = S['StepStatus'];
export type Step = S['Step'];
export type TaskMessage = S['TaskMessage'];
/** A task as REST answers carry it; `conversation` only in single-task answers. */
export type Task = S['Task'];
/** The data of a task.created or task.updated event: the task without its conversation, and the entries the change added. */
export type TaskEvent = S['TaskEvent'];
export type NewTask = S['CreateTaskRequest'];
export type Conversation = S['Conversation'];
export type Message = S['Message'];
export type SearchResult = S['SearchResult'];
export type ReactionCount = S['ReactionCount'];
export type DocumentInfo = S['Document'];
export type About = S['About'];
export type DeletedCount = S['DeletedCount'];
export type EventType = S['EventType'];
/** The data of reaction.added / reaction.removed and participant.added / participant.removed. */
export type ReactionEvent = S['ReactionEvent'];
export type ParticipantEvent = S['ParticipantEvent'];
/** One of the signed-in person's browser sessions (team mode); `current` is this browser's. */
export type BrowserSession = S['Session'];

/**
 * One frame of the event stream. `data`'s schema depends on `type` (see the Event schema's
 * description; OpenAPI cannot say it), so it stays untyped here and `AppState.apply` reads it
 * per type. New types may come: they are skipped.
 */
export type StreamEvent = Omit<S['Event'], 'data'> & { data: any };

// ---- GraphQL: each type holds what the UI's queries select (api.ts) ----

export type Viewer = G.Viewer;
export type Skill = Pick<G.Skill, 'id' | 'name' | 'description'>;
export interface Agent extends Pick<G.Agent, 'id' | 'name'> {
  /** Loaded by GraphQL (agents { skills { id name } }); agent events leave it out. */
  skills?: Pick<G.Skill, 'id' | 'name'>[];
  /** The agent's last contact (RFC 3339); null when never seen; absent from agent events. */
  lastSeenAt?: G.Agent['lastSeenAt'];
}
export type EnvVar = G.EnvVar;
export type CatchUp = G.CatchUpPolicy;
export type Job = G.Job;
export type JobRun = G.JobRun;
/** secret is set only in createWebhook's answer. */
export type Webhook = Omit<G.Webhook, 'secret'> & { secret?: string | null };
export type WebhookDelivery = G.WebhookDelivery;
export type MailSend = G.MailSend;
/** A remote A2A agent and its Agent Card; its credential is never shown. */
export interface RemoteAgent extends Pick<G.RemoteAgent, 'cardUrl' | 'name' | 'description' | 'url' | 'streaming' | 'credentialKind'> {
  agent: Pick<G.Agent, 'id' | 'name'>;
  skills: Pick<G.AgentCardSkill, 'id' | 'name' | 'description'>[];
}
type UsageCounts = Pick<G.UsageRow, 'inputTokens' | 'outputTokens' | 'costUsd' | 'reports'>;
/** A usage row with its grouping key (day, agent or model) when it has one. */
export type UsageRow = UsageCounts & Partial<Pick<G.UsageRow, 'day' | 'agentId' | 'agentName' | 'model'>>;
export interface UsageReport extends Pick<G.UsageReport, 'from' | 'to'> {
  total: UsageCounts;
  byDay: (UsageCounts & Pick<G.UsageRow, 'day'>)[];
  byAgent: (UsageCounts & Pick<G.UsageRow, 'agentId' | 'agentName'>)[];
  byModel: (UsageCounts & Pick<G.UsageRow, 'model'>)[];
}
export type Budget = G.Budget;
export type ActivityEntry = Omit<G.ActivityEntry, 'eventSeq'>;
export type VectorSpace = G.VectorSpace;
export type VectorDocument = G.VectorDocument;
export type VectorResult = G.VectorResult;
export type Participant = G.Participant;
/** Who reacted how to a message (the viewer's own reactions are looked up with it). */
export type Reaction = Pick<G.Reaction, 'actor' | 'actorKind' | 'emoji' | 'messageId'>;
/** The token list leaves out the value; creating and rotating show it once (and skip expiresAt). */
export type Role = G.MemberRole;
/** A member as the Members screen's query selects it. */
export type Member = Pick<G.Member, 'userId' | 'name' | 'email' | 'role' | 'isLocalOwner' | 'createdAt'>;
export type Token = Omit<G.Token, 'token' | 'expiresAt'> & Partial<Pick<G.Token, 'token' | 'expiresAt'>>;

// ---- UI-only ----

/** The board's columns, in order. */
export const STATUSES = ['Backlog', 'Todo', 'Doing', 'Waiting', 'Done', 'Failed'] as const satisfies readonly Status[];
export const STEP_STATUSES = ['pending', 'in_progress', 'completed', 'skipped'] as const satisfies readonly StepStatus[];
// Compile-time checks that the lists above name every status the server has.
true satisfies [Exclude<Status, (typeof STATUSES)[number]>] extends [never] ? true : false;
true satisfies [Exclude<StepStatus, (typeof STEP_STATUSES)[number]>] extends [never] ? true : false;

/** The waiting question ('' when there is none). */
export function waitingText(t: Pick<Task, 'waiting_details'>): string {
  return t.waiting_details ?? '';
}
