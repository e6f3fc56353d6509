// The new-task form's limits, told as the person types: the API's own (limits.gen.ts,
// from openapi.json), counted as the server counts (characters, not UTF-16 units).
// Nothing is cut: a text past its limit is said so, and the form is not sent.
import { taskLimits } from './limits.gen';

/** Characters as the server counts them (Unicode code points). */
export function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** "812 / 1000", and whether it is past the limit. */
export function counter(text: string, max: number): { text: string; over: boolean } {
  const n = chars(text);
  return { text: `${n.toLocaleString('en')} / ${max.toLocaleString('en')}`, over: n > max };
}

/** The steps as the form sends them: one per non-empty line. */
export function stepLines(text: string): string[] {
  return text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What keeps the steps from being sent ('' when nothing). */
export function stepsProblem(text: string): string {
  const lines = stepLines(text);
  if (lines.length > taskLimits.steps) return `${lines.length.toLocaleString('en')} steps: at most ${taskLimits.steps} per task.`;
  const long = lines.findIndex((l) => chars(l) > taskLimits.stepTitle);
  if (long >= 0) return `Step ${long + 1} is ${chars(lines[long]).toLocaleString('en')} characters: at most ${taskLimits.stepTitle.toLocaleString('en')} per step.`;
  return '';
}
