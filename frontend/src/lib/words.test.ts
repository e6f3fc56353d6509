import { describe, it, expect } from 'vitest';
import { count } from './words';

describe('count', () => {
  it('says one thing in the singular and every other number in the plural', () => {
    expect(count(1, 'document')).toBe('1 document');
    expect(count(0, 'document')).toBe('0 documents');
    expect(count(2, 'chunk')).toBe('2 chunks');
    expect(count(1200, 'task')).toBe('1200 tasks');
    expect(count(3, 'person', 'people')).toBe('3 people');
  });
});
