// A question's structure (issue 40): the options as buttons, the schema as a form, the
// deadline as a countdown. The server checks every answer (service/questions.go); the
// form only helps: its 400 names each failing field, and the form shows it.
import type { Task } from './types';
import type { WaitingFor } from './api';
import { shortDuration } from './time';

/** One field of a question's form, as the input that fills it. */
export interface FormField {
  name: string;
  label: string;
  description: string;
  /** The input: text (with a type), a number, a checkbox, a select or a date. */
  kind: 'text' | 'email' | 'url' | 'number' | 'checkbox' | 'select' | 'date' | 'datetime';
  type: 'string' | 'number' | 'integer' | 'boolean';
  required: boolean;
  options: { value: string; label: string }[];
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  initial: string | boolean;
}

interface PropertySchema {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  enum?: string[];
  enumNames?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
}

interface ObjectSchema {
  title?: string;
  description?: string;
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

/** The fields of a task's form, in the schema's order; [] without one. */
export function formFields(t: Pick<Task, 'waiting_schema'>): FormField[] {
  const schema = t.waiting_schema as ObjectSchema | null;
  if (!schema?.properties) return [];
  const required = schema.required ?? [];
  return Object.entries(schema.properties).map(([name, p]) => {
    const type = (p.type ?? 'string') as FormField['type'];
    let kind: FormField['kind'] = 'text';
    if (type === 'boolean') kind = 'checkbox';
    else if (type === 'number' || type === 'integer') kind = 'number';
    else if (p.enum) kind = 'select';
    else if (p.format === 'date') kind = 'date';
    else if (p.format === 'date-time') kind = 'datetime';
    else if (p.format === 'email') kind = 'email';
    else if (p.format === 'uri') kind = 'url';
    const initial = type === 'boolean' ? p.default === true : p.default === undefined ? '' : String(p.default);
    return {
      name,
      label: p.title || name,
      description: p.description ?? '',
      kind,
      type,
      required: required.includes(name),
      options: (p.enum ?? []).map((v, i) => ({ value: v, label: p.enumNames?.[i] ?? v })),
      min: p.minimum,
      max: p.maximum,
      minLength: p.minLength,
      maxLength: p.maxLength,
      initial,
    };
  });
}

/** The data a form's values make: numbers as numbers, a local date and time in RFC 3339, empty fields left out (the server says which are required). */
export function formData(fields: FormField[], values: Record<string, string | number | boolean | null>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'checkbox') {
      data[f.name] = v === true;
      continue;
    }
    if (typeof v === 'number') {
      data[f.name] = v; // a number input bound in Svelte gives a number
      continue;
    }
    if (typeof v !== 'string' || v.trim() === '') continue;
    if (f.kind === 'number') data[f.name] = Number(v);
    else if (f.kind === 'datetime') data[f.name] = new Date(v).toISOString();
    else data[f.name] = v;
  }
  return data;
}

/** The deadline as people read it ("Answer within 9 m; then it fails"), or '' without one. */
export function deadlineText(t: Pick<Task, 'waiting_expires_at' | 'waiting_on_expiry' | 'waiting_default'>, now: number): string {
  if (!t.waiting_expires_at) return '';
  const left = Date.parse(t.waiting_expires_at) - now;
  const then =
    t.waiting_on_expiry === 'default'
      ? `then the answer is ${typeof t.waiting_default === 'string' ? `“${t.waiting_default}”` : 'its default'}`
      : 'then the task fails';
  return left <= 0 ? `The deadline has passed; ${then}.` : `Answer within ${shortDuration(left)}; ${then}.`;
}

/** The field a server message names first ("data does not fill the form: seats must be…"), for focus. */
export function fieldInError(fields: FormField[], message: string): string | null {
  const detail = message.split(': ').slice(1).join(': ');
  for (const part of detail.split('; ')) {
    const f = fields.find((f) => part.startsWith(f.name + ' '));
    if (f) return f.name;
  }
  return null;
}

/** Whom a question waits for, as a card says it: "asks you", "asks dana@example.com", "asks anyone who can answer"; '' when not known yet. */
export function askedLabel(w: WaitingFor | undefined): string {
  if (!w) return '';
  if (w.asks_you) return 'asks you';
  if (w.anyone) return 'asks anyone who can answer';
  return `asks ${w.asked.join(', ')}`;
}
