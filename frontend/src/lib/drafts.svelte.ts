// Answers being typed, by task id: they outlive the reply box, so that a question
// answered elsewhere (or a screen change) does not throw the text away.
export const drafts = $state<Record<number, string>>({});

export function dropDraft(id: number): void {
  delete drafts[id];
}
