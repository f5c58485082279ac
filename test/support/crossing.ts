import type { KeyValueStorage } from '../../src/auth';

/** The key the servers' list is kept under by default. */
export const LIST = 'mcp-react-query:servers';

/**
 * A tab's view of the shared storage in which its writes of the list land only on `flush()`, as
 * another process's localStorage shows them later; from then on, at once.
 */
export function crossing(shared: KeyValueStorage) {
  let pending: string | undefined;
  let held = true;
  const storage: KeyValueStorage = {
    getItem: (key) => (key === LIST && pending !== undefined ? pending : shared.getItem(key)),
    setItem: (key, value) => {
      if (key === LIST && held) pending = value;
      else shared.setItem(key, value);
    },
    removeItem: (key) => shared.removeItem(key),
  };
  return {
    storage,
    writer: () => JSON.parse(pending ?? '{}').writer as string,
    flush() {
      if (pending !== undefined) shared.setItem(LIST, pending);
      pending = undefined;
      held = false;
    },
    /** Writes land only on the next `flush()` again. */
    hold() {
      held = true;
    },
  };
}
