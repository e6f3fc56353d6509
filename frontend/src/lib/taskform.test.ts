import { describe, it, expect } from 'vitest';
import { chars, counter, stepsProblem } from './taskform';
import { taskLimits } from './limits.gen';

describe('the task form limits', () => {
  it('are the API’s', () => {
    expect(taskLimits).toEqual({ summary: 1000, details: 100000, steps: 500, stepTitle: 1000 });
  });

  it('count characters as the server does (an emoji is one)', () => {
    expect(chars('a😀b')).toBe(3);
    expect(counter('😀'.repeat(1000), 1000)).toEqual({ text: '1,000 / 1,000', over: false });
    expect(counter('x'.repeat(1001), 1000).over).toBe(true);
  });

  it('name the step that is too long, or too many steps', () => {
    expect(stepsProblem('a\n\n  b  \n')).toBe('');
    expect(stepsProblem('a\n' + 'x'.repeat(1001))).toBe('Step 2 is 1,001 characters: at most 1,000 per step.');
    expect(stepsProblem(Array.from({ length: 501 }, (_, i) => 's' + i).join('\n'))).toBe('501 steps: at most 500 per task.');
  });
});
