import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import Jumper from '../components/Jumper.svelte';
import FoundElsewhere from '../components/FoundElsewhere.svelte';
import { app } from './state.svelte';
import { fakeFetch } from './test-helpers';

describe('Jumper (Ctrl+K)', () => {
  beforeAll(() => {
    // jsdom has no modal dialogs.
    HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
      this.open = true;
    };
    HTMLDialogElement.prototype.close ??= function (this: HTMLDialogElement) {
      this.open = false;
    };
  });
  afterEach(cleanup);

  it('searches the server for what is typed and shows the results as links with snippets', async () => {
    app.tasks = new Map();
    const calls = fakeFetch(() => ({
      results: [{ type: 'message', id: 9, title: 'ana in Support', snippet: '…see ticket 399 for the cause', url: '/conversations/4' }],
    }));
    render(Jumper, { screens: [{ key: 'board', label: 'Board' }], onclose: () => {} });
    await fireEvent.input(screen.getByRole('combobox'), { target: { value: 'ticket 399 ' } });
    const link = await screen.findByRole('option', { name: /ana in Support/ });
    expect(link.getAttribute('href')).toBe('/conversations/4');
    expect(link.textContent).toContain('…see ticket 399 for the cause');
    expect(calls.map((c) => c.url)).toEqual(['/api/search?q=ticket%20399&limit=20']);
  });

  it('says when the search fails', async () => {
    fakeFetch(() => new Response(JSON.stringify({ error: { code: 'forbidden', message: 'search needs a read scope' } }), { status: 403 }));
    render(Jumper, { screens: [], onclose: () => {} });
    await fireEvent.input(screen.getByRole('combobox'), { target: { value: 'zebra' } });
    await vi.waitFor(() => expect(screen.getByRole('alert').textContent).toContain('search needs a read scope'));
    expect(screen.getByText('Nothing matches “zebra”.')).toBeTruthy();
  });
});

describe('FoundElsewhere (beside the board search)', () => {
  afterEach(cleanup);

  it('lists the messages and documents the board search words find, as links; the tasks are on the board', async () => {
    const calls = fakeFetch(() => ({
      results: [
        { type: 'task', id: 399, title: 'Ticket 399', snippet: '', url: '/tasks/399' },
        { type: 'document', id: 2, title: 'ticket-399.log', snippet: 'Shared by ana in Support', url: '/conversations/4' },
      ],
    }));
    render(FoundElsewhere, { query: 'ticket 399' });
    const link = await screen.findByRole('link', { name: /ticket-399\.log/ });
    expect(link.getAttribute('href')).toBe('/conversations/4');
    expect(link.textContent).toContain('Shared by ana in Support');
    expect(screen.queryByText('Ticket 399')).toBeNull();
    expect(calls.map((c) => c.url)).toEqual(['/api/search?q=ticket%20399&limit=20']);
  });
});
