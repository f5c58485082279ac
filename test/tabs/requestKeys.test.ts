/**
 * Tab messages that carry the keys issue 21 adds (prompts with arguments, completions, tasks):
 * they pass the shape check, bounded, and nothing else of their kind does.
 */
import { describe, expect, it } from 'vitest';
import { createMcpKeys } from '../../src/core/keys';
import { isGroupKey } from '../../src/tabs/link';
import { parseTabMessage } from '../../src/tabs/validate';

const keys = createMcpKeys('s');
const read = (key: unknown) =>
  parseTabMessage({ type: 'read', tab: 't', id: 1, key, fresh: false });

describe('request keys between tabs', () => {
  it('a prompt, a completion and a task key cross, scoped and bounded', () => {
    const prompt = keys.prompt('greet', { who: 'Ann', empty: '' });
    const completion = keys.completion(
      { type: 'ref/prompt', name: 'greet' },
      { name: 'who', value: '' },
      { arguments: { tone: 'warm' } },
    );
    const task = keys.task('task-1');
    for (const key of [prompt, completion, task]) {
      expect(read(key)).toBeDefined();
      expect(isGroupKey(keys, key)).toBe(true);
      expect(isGroupKey(createMcpKeys('other'), key)).toBe(false);
    }
  });

  it('refuses keys too long, too big, too deep or of the wrong types', () => {
    const huge = { who: 'x'.repeat(20_000) };
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`a${i}`, 'v']));
    const deep = { a: { b: { c: 'd' } } };
    for (const key of [
      ['mcp', 's', 'prompt', 'greet', huge],
      ['mcp', 's', 'prompt', 'greet', many],
      ['mcp', 's', 'completion', deep, {}, {}],
      ['mcp', 's', 'prompt', 'greet', { who: 7 }],
      ['mcp', 's', 'task', 1],
      ['mcp', 's', 'prompt', 'greet', {}, {}, 'x'],
      ['mcp', 's', 'prompt', '', {}],
      ['mcp', 's', 'prompt', ['greet'], {}],
    ]) {
      expect(read(key)).toBeUndefined();
    }
  });
});
