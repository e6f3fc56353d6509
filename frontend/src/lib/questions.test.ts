import { describe, it, expect } from 'vitest';
import { deadlineText, fieldInError, formData, formFields } from './questions';
import { task } from './test-helpers';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name' },
    seats: { type: 'integer', minimum: 1, maximum: 9 },
    class: { type: 'string', enum: ['eco', 'biz'], enumNames: ['Economy', 'Business'] },
    on: { type: 'string', format: 'date' },
    window: { type: 'boolean', default: true },
  },
  required: ['name'],
};

describe('questions', () => {
  it('makes a form of a schema, in its order', () => {
    const fields = formFields(task({ waiting_schema: schema as never }));
    expect(fields.map((f) => `${f.name}:${f.kind}:${f.required}`)).toEqual(['name:text:true', 'seats:number:false', 'class:select:false', 'on:date:false', 'window:checkbox:false']);
    expect(fields[2].options).toEqual([{ value: 'eco', label: 'Economy' }, { value: 'biz', label: 'Business' }]);
    expect(fields[4].initial).toBe(true);
    expect(formData(fields, { name: 'Ada', seats: '2', class: '', on: '2026-12-24', window: false })).toEqual({ name: 'Ada', seats: 2, on: '2026-12-24', window: false });
    // A number input bound by Svelte holds a number, and null when emptied.
    expect(formData(fields, { name: 'Ada', seats: 3, window: true })).toEqual({ name: 'Ada', seats: 3, window: true });
    expect(formData(fields, { name: 'Ada', seats: null, window: true })).toEqual({ name: 'Ada', window: true });
  });

  it('finds the field a refusal names', () => {
    const fields = formFields(task({ waiting_schema: schema as never }));
    expect(fieldInError(fields, 'data does not fill the form: name is required; seats must be at least 1')).toBe('name');
  });

  it('says the deadline and what happens then', () => {
    const at = '2026-01-01T00:10:00Z';
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(deadlineText(task({ waiting_expires_at: at, waiting_on_expiry: 'fail' }), now)).toBe('Answer within 10 m; then the task fails.');
    expect(deadlineText(task({ waiting_expires_at: at, waiting_on_expiry: 'default', waiting_default: 'Reject' }), now)).toBe('Answer within 10 m; then the answer is “Reject”.');
    expect(deadlineText(task({}), now)).toBe('');
  });
});
