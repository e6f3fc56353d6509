import { describe, it, expect, vi } from 'vitest';
import { render, fireEvent, screen } from '@testing-library/svelte';
import CopyButton from '../components/CopyButton.svelte';

describe('CopyButton', () => {
  it('copies its text, and its name is what it shows, before and after (axe: label-content-name-mismatch)', async () => {
    const copied: string[] = [];
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText: async (t: string) => void copied.push(t) } });
    render(CopyButton, { text: 'the value', label: 'Copy snippet' });
    await fireEvent.click(screen.getByRole('button', { name: 'Copy snippet' }));
    expect(copied).toEqual(['the value']);
    const after = await screen.findByRole('button', { name: 'Copied ✓' });
    expect(after.textContent).toBe('Copied ✓');
  });
});
