import { QueryClient } from '@tanstack/query-core';
import { describe, expect, it } from 'vitest';
import { createMcpKeys, createShouldPersistQuery, shouldPersistQuery } from '../../src/core';

/** Whether `filter` keeps the query cached under `key` with `data`. */
function kept(filter: typeof shouldPersistQuery, key: readonly unknown[], data: unknown): boolean {
  const client = new QueryClient();
  client.setQueryData(key, data);
  const query = client.getQueryCache().find({ queryKey: key, exact: true });
  if (!query) throw new Error('not cached');
  return filter(query);
}

const publicFilter = createShouldPersistQuery({ unmarked: 'public' });

describe.each([undefined, 'docs'])('what a persister may keep (scope %s)', (scope) => {
  const keys = createMcpKeys(scope);
  const requests = [
    ['a prompt', keys.prompt('greet', { name: 'Ada' }), { messages: [] }],
    [
      'a completion',
      keys.completion({ type: 'ref/prompt', name: 'greet' }, { name: 'name', value: 'A' }),
      { completion: { values: ['Ada'] } },
    ],
    ['a task', keys.task('t1'), { task: { taskId: 't1', status: 'completed' } }],
    ['the tasks', keys.tasks(), { tasks: [] }],
    ['a resource', keys.resource('notes://today'), { contents: [] }],
  ] as const;

  it.each(requests)('%s the server did not mark is private by default', (_, key, data) => {
    expect(kept(shouldPersistQuery, key, data)).toBe(false);
    expect(kept(publicFilter, key, data)).toBe(true);
  });

  it.each(requests)('%s marked private is never kept, marked public always', (_, key, data) => {
    expect(kept(publicFilter, key, { ...data, cacheScope: 'private' })).toBe(false);
    expect(kept(shouldPersistQuery, key, { ...data, cacheScope: 'public' })).toBe(true);
  });

  it('the lists are unmarked: kept only when unmarked content is public', () => {
    expect(kept(shouldPersistQuery, keys.resources(), [{ uri: 'a://1', name: 'a' }])).toBe(false);
    expect(kept(publicFilter, keys.tools(), [{ name: 't', inputSchema: {} }])).toBe(true);
  });
});

it("the app's own queries are kept as TanStack keeps them", () => {
  expect(kept(shouldPersistQuery, ['todos', 1], { title: 'x' })).toBe(true);
  expect(kept(shouldPersistQuery, ['mcp'], 1)).toBe(true);
});
