import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { cleanup, render, fireEvent } from '@testing-library/svelte';
import { mentionQuery, suggest, insertMention, highlightMentions, type Mentionable } from './mentions';
import MentionInput from '../components/MentionInput.svelte';
import Markdown from '../components/Markdown.svelte';
import Inbox from '../screens/Inbox.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import type { Message } from './types';

const people: Mentionable[] = [
  { kind: 'agent', name: 'worker' },
  { kind: 'agent', name: 'writer' },
  { kind: 'user', name: 'Ann Lee', alias: 'ann.lee' },
  { kind: 'user', name: 'Bob' },
];

describe('mention helpers', () => {
  it('finds the "@..." being typed, not inside words or emails', () => {
    expect(mentionQuery('hi @wo', 6)).toEqual({ start: 3, query: 'wo' });
    expect(mentionQuery('@', 1)).toEqual({ start: 0, query: '' });
    expect(mentionQuery('(@Ann L', 7)).toEqual({ start: 1, query: 'Ann L' });
    expect(mentionQuery('mail ann@ex', 11)).toBeNull();
    expect(mentionQuery('@wo\nnext', 8)).toBeNull();
    expect(mentionQuery('no at sign', 10)).toBeNull();
  });

  it('suggests names, words of names and aliases that start with the query; agents first', () => {
    expect(suggest('wo', people).map((m) => m.name)).toEqual(['worker']);
    expect(suggest('W', people).map((m) => m.name)).toEqual(['worker', 'writer']);
    expect(suggest('lee', people).map((m) => m.name)).toEqual(['Ann Lee']);
    expect(suggest('ann.', people).map((m) => m.name)).toEqual(['Ann Lee']);
    expect(suggest('', people)).toHaveLength(4);
    expect(suggest('zed', people)).toEqual([]);
  });

  it('puts the name in place of the query, with a space after it', () => {
    expect(insertMention('ask @wo now', 4, 7, 'worker')).toEqual({ text: 'ask @worker  now', caret: 12 });
    expect(insertMention('@An', 0, 3, 'Ann Lee')).toEqual({ text: '@Ann Lee ', caret: 9 });
  });

  it('highlights the texts the server found, outside code and links, not inside longer words', () => {
    const ms: Message['mentions'] = [
      { kind: 'agent', name: 'worker', agentId: 1, text: '@worker' },
      { kind: 'user', name: 'Ann Lee', userId: 2, text: '@Ann Lee' },
    ];
    const html = highlightMentions('<p>@worker and @Ann Lee, not @workers or <code>@worker</code></p>', ms);
    expect(html).toBe('<p><span class="mention">@worker</span> and <span class="mention">@Ann Lee</span>, not @workers or <code>@worker</code></p>');
    expect(highlightMentions('<p>@worker</p>', [])).toBe('<p>@worker</p>');
    // Text is never turned into markup.
    expect(highlightMentions('<p>&lt;b&gt; @worker</p>', ms)).toBe('<p>&lt;b&gt; <span class="mention">@worker</span></p>');
  });
});

describe('MentionInput', () => {
  afterEach(cleanup);

  it('suggests after "@wo" and picks with Enter', async () => {
    const sent = vi.fn();
    const { container } = render(MentionInput, { props: { id: 'draft', people, onkeydown: sent } });
    const box = container.querySelector('textarea')!;
    box.value = 'hi @wo';
    box.setSelectionRange(6, 6);
    await fireEvent.input(box);
    const options = [...container.querySelectorAll('[data-testid="mention-option"]')];
    expect(options.map((o) => o.textContent)).toEqual([expect.stringContaining('worker')]);
    expect(box.getAttribute('aria-expanded')).toBe('true');
    await fireEvent.keyDown(box, { key: 'Enter' });
    expect(box.value).toBe('hi @worker ');
    expect(container.querySelector('[data-testid="mention-suggestions"]')).toBeNull();
    expect(sent).not.toHaveBeenCalled(); // Enter picked; it was not the composer's
  });

  it('moves with the arrows, picks with a click, closes with Escape and passes Ctrl+Enter on', async () => {
    const sent = vi.fn();
    const { container } = render(MentionInput, { props: { id: 'draft', people, onkeydown: sent } });
    const box = container.querySelector('textarea')!;
    box.value = '@w';
    box.setSelectionRange(2, 2);
    await fireEvent.input(box);
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    const options = container.querySelectorAll('[data-testid="mention-option"]');
    expect(options[1].getAttribute('aria-selected')).toBe('true');
    await fireEvent.mouseDown(options[1]);
    expect(box.value).toBe('@writer ');

    box.value = '@B';
    box.setSelectionRange(2, 2);
    await fireEvent.input(box);
    expect(container.querySelectorAll('[data-testid="mention-option"]')).toHaveLength(1);
    await fireEvent.keyDown(box, { key: 'Escape' });
    expect(container.querySelector('[data-testid="mention-suggestions"]')).toBeNull();
    await fireEvent.keyDown(box, { key: 'Enter', ctrlKey: true });
    expect(sent).toHaveBeenCalledTimes(1);
    expect(box.value).toBe('@B');
  });
});

describe('Markdown with mentions', () => {
  afterEach(cleanup);

  it('shows the mentions of a message highlighted', () => {
    const { container } = render(Markdown, {
      props: { text: 'ping **@worker** please', mentions: [{ kind: 'agent', name: 'worker', agentId: 1, text: '@worker' }] },
    });
    const span = container.querySelector('strong .mention');
    expect(span?.textContent).toBe('@worker');
  });
});

describe('Inbox mentions', () => {
  afterEach(cleanup);
  beforeEach(() => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['messaging:read'] } };
    app.tasksLoaded = true;
    app.conversations = [{ id: 3, uuid: 'u', projectId: 'p', name: 'launch', participants: [], createdAt: '2026-01-01T00:00:00Z' }];
    app.mentions = [];
    app.mentionsLoaded = true;
  });

  const said: Message = {
    id: 9, conversationId: 3, author: 'worker', authorType: 'agent', agentId: 1, content: '@owner the report is ready',
    reactions: [], mentions: [{ kind: 'user', name: 'owner', userId: 1, text: '@owner' }], createdAt: '2026-01-01T00:00:00Z',
  };

  it('lists the messages that mention the viewer, linking to their conversation', () => {
    app.mentions = [said];
    render(Inbox);
    const items = document.querySelectorAll('[data-testid="mention-item"]');
    expect(items).toHaveLength(1);
    expect(items[0].textContent).toContain('worker in launch');
    expect(items[0].querySelector('a')!.getAttribute('href')).toBe('/conversations/3');
    expect(items[0].querySelector('.mention')!.textContent).toBe('@owner');
  });

  it('says so when nobody has mentioned the viewer', () => {
    render(Inbox);
    expect(document.querySelector('[data-testid="mentions-empty"]')).not.toBeNull();
  });

  it('asks the server whether a new message with mentions names the viewer, and tells once', async () => {
    const calls = fakeFetch(() => [said]);
    const told = vi.fn();
    app.onMentioned = told;
    app.apply({ seq: 1, type: 'message.created', projectId: 'p', at: said.createdAt, data: said });
    await vi.waitFor(() => expect(app.mentions).toHaveLength(1));
    expect(calls[0]).toMatchObject({ method: 'GET', url: '/api/projects/p/mentions?limit=50' });
    expect(told).toHaveBeenCalledWith(said);
    // A message that mentions nobody asks nothing.
    app.apply({ seq: 2, type: 'message.created', projectId: 'p', at: said.createdAt, data: { ...said, id: 10, mentions: [] } });
    expect(calls).toHaveLength(1);
    app.onMentioned = () => {};
  });
});
