import { describe, expect, it } from 'vitest';
import { jumpResults, withFound, type JumpSources } from './jump';

const src: JumpSources = {
  tasks: [
    { id: 12, summary: 'Write the release notes', status: 'Doing', agent_name: 'writer' },
    { id: 7, summary: 'Plan the launch', status: 'Waiting', agent_name: '' },
    { id: 30, summary: 'Notes for the launch party', status: 'Backlog', agent_name: '' },
  ],
  conversations: [{ id: 3, name: 'release-planning', participants: ['ui', 'writer'] }],
  agents: [{ id: 1, name: 'writer' }],
  screens: [
    { key: 'board', label: 'Board' },
    { key: 'agents', label: 'Agents' },
  ],
};

describe('jumpResults', () => {
  it('lists the screens before anything is typed', () => {
    expect(jumpResults('', src).map((r) => r.path)).toEqual(['/board', '/agents']);
  });
  it('finds tasks, conversations and agents by every word typed, best first', () => {
    const r = jumpResults('release', src);
    expect(r.map((x) => x.path)).toEqual(['/conversations/3', '/board/12']);
    expect(jumpResults('launch notes', src).map((x) => x.path)).toEqual(['/board/30']);
    expect(jumpResults('writ', src).map((x) => x.kind)).toEqual(['agent', 'task']);
  });
  it('finds a task by its number', () => {
    expect(jumpResults('#7', src)[0]).toMatchObject({ kind: 'task', label: 'Plan the launch', path: '/board/7' });
    expect(jumpResults('12', src)[0].path).toBe('/board/12');
  });
  it('finds nothing for what nothing holds', () => {
    expect(jumpResults('zebra', src)).toEqual([]);
  });
});

describe('withFound', () => {
  it('adds what the server found after what is loaded, without a loaded task twice', () => {
    const loaded = jumpResults('release', src);
    const items = withFound(loaded, [
      { type: 'task', id: 12, title: 'Write the release notes', snippet: '', url: '/tasks/12' },
      { type: 'task', id: 399, title: 'Ticket 399', snippet: 'the release is blocked', url: '/tasks/399' },
      { type: 'message', id: 5, title: 'ana in release-planning', snippet: '…ship the release on Friday', url: '/conversations/3' },
      { type: 'document', id: 2, title: 'release.md', snippet: 'Shared by ana in release-planning', url: '/conversations/3' },
    ]);
    expect(items.map((i) => `${i.kind} ${i.path}`)).toEqual([
      'conversation /conversations/3',
      'task /board/12',
      'task /tasks/399',
      'message /conversations/3',
      'document /conversations/3',
    ]);
    expect(items[3]).toMatchObject({ label: 'ana in release-planning', hint: '…ship the release on Friday' });
  });
});
