import { describe, it, expect, beforeEach } from 'vitest';
import { render, fireEvent, screen, cleanup, waitFor } from '@testing-library/svelte';
import RemoteAgents from '../components/RemoteAgents.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';
import type { RemoteAgent } from './types';

const translator: RemoteAgent = {
  agent: { id: 4, name: 'translator' },
  cardUrl: 'https://t.example/.well-known/agent-card.json',
  name: 'Translator',
  description: 'Translates release notes.',
  url: 'https://t.example/rpc',
  streaming: true,
  credentialKind: 'bearer',
  skills: [{ id: 'translate', name: 'Translate', description: 'Into any language' }],
};

describe('remote A2A agents', () => {
  beforeEach(() => {
    cleanup();
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read', 'admin'] } };
  });

  it('registers one by its card URL with a credential, then shows its card without the credential', async () => {
    const list: RemoteAgent[] = [];
    const calls = fakeFetch((c) => {
      const q: string = c.body?.query ?? '';
      if (q.includes('registerRemoteAgent')) {
        list.push(translator);
        return { data: { r: translator } };
      }
      if (q.includes('remoteAgents')) return { data: { remoteAgents: list } };
      return { data: { agents: [], skills: [] } }; // the agents reloaded after a registration
    });
    render(RemoteAgents);
    await screen.findByText(/No remote agents/);
    await fireEvent.input(screen.getByLabelText('Name in this project'), { target: { value: 'translator' } });
    await fireEvent.input(screen.getByLabelText('Agent Card URL'), { target: { value: translator.cardUrl } });
    const kind = screen.getByLabelText<HTMLSelectElement>('Credential');
    kind.value = 'bearer';
    await fireEvent.change(kind);
    const button = screen.getByRole('button', { name: 'Register remote agent' }) as HTMLButtonElement;
    expect(button.disabled).toBe(true); // a kind of credential without the credential
    await fireEvent.input(screen.getByLabelText('The token or key'), { target: { value: 's3cret' } });
    await fireEvent.submit(button.closest('form')!);
    const card = await screen.findByTestId('remote-agent');
    expect(card.textContent).toContain('Translator');
    expect(card.textContent).toContain('Translates release notes.');
    expect(card.textContent).toContain('Translate');
    expect(card.textContent).toContain('https://t.example/rpc');
    expect(card.textContent).not.toContain('s3cret');
    const sent = calls.find((c) => c.body?.query?.includes('registerRemoteAgent'))!;
    expect(sent.body.variables).toEqual({ n: 'translator', u: translator.cardUrl, k: 'bearer', c: 's3cret' });
    await waitFor(() => expect((screen.getByLabelText('Name in this project') as HTMLInputElement).value).toBe(''));
  });

  it('shows the cards without the form to a member who is not an admin', async () => {
    app.session = { token: 't', desktop: false, wsBase: 'ws://x', viewer: { kind: 'token', name: 'ui', projectId: 'p', scopes: ['task:read'] } };
    fakeFetch(() => ({ data: { remoteAgents: [translator] } }));
    render(RemoteAgents);
    await screen.findByTestId('remote-agent');
    expect(screen.queryByRole('button', { name: 'Register remote agent' })).toBeNull();
  });
});
