import { describe, expect, it } from 'vitest';
import type { SyncInternals } from '../../src/core/internals';
import { createMcpKeys } from '../../src/core/keys';
import { TaskBook, type TaskStorage } from '../../src/core/taskBook';

function memoryStorage(): TaskStorage & { keys(): string[] } {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    keys: () => [...items.keys()],
  };
}

function book(
  storage: TaskStorage,
  where: { connection: string; scope: string | undefined; auth: string | undefined },
): TaskBook {
  const internals = {
    identity: () => ({ connection: where.connection, auth: where.auth }),
  } as unknown as SyncInternals;
  return new TaskBook(internals, createMcpKeys(where.scope), storage);
}

const task = (taskId: string) => ({ taskId, name: 'slow', startedAt: 1 });

describe('where a task book keeps its tasks', () => {
  it('scope "" and no scope are two books, as they are two scopes', () => {
    const storage = memoryStorage();
    const empty = book(storage, { connection: 'https://a/mcp', scope: '', auth: undefined });
    const none = book(storage, { connection: 'https://a/mcp', scope: undefined, auth: undefined });
    empty.add(task('in-empty'));
    expect(none.list()).toEqual([]);
    none.add(task('in-none'));
    expect(empty.list().map((t) => t.taskId)).toEqual(['in-empty']);
    expect(storage.keys()).toHaveLength(2);
  });

  it('no spelling of server, scope and identity reads another’s book (a | in a part)', () => {
    const storage = memoryStorage();
    const a = book(storage, { connection: 'https://a/mcp', scope: 'x|y', auth: undefined });
    const b = book(storage, { connection: 'https://a/mcp', scope: 'x', auth: 'y|' });
    a.add(task('for-a'));
    expect(b.list()).toEqual([]);
  });
});
