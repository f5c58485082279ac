import { vi } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { LIST } from './crossing';

/**
 * One browser's localStorage: what it holds (`committed`) and each tab's view of the list's key.
 * A tab's write shows in its own view at once and lands later (at once for a tab that keeps up);
 * a write that landed shows in the other views, each with a `storage` event (its `storageArea`
 * that view), later (at once, on a microtask, for a tab that keeps up).
 */
export function browserStorage() {
  const committed = memoryStorage();
  const events = new EventTarget();
  vi.stubGlobal('addEventListener', events.addEventListener.bind(events));
  vi.stubGlobal('removeEventListener', events.removeEventListener.bind(events));
  const views = new Set<ReturnType<typeof view>>();

  function view({ keepsUp }: { keepsUp: boolean }) {
    let shown = committed.getItem(LIST);
    const unlanded: string[] = [];
    const unseen: string[] = [];
    const storage: KeyValueStorage = {
      getItem: (key) => (key === LIST ? shown : committed.getItem(key)),
      setItem: (key, value) => {
        if (key !== LIST) return committed.setItem(key, value);
        shown = value;
        unlanded.push(value);
        if (keepsUp) made.land();
      },
      removeItem: (key) => committed.removeItem(key),
    };
    const made = {
      storage,
      /** Its writes land in the browser's storage, and go to the other views. */
      land() {
        for (const value of unlanded.splice(0)) {
          committed.setItem(LIST, value);
          for (const other of views) if (other !== made) other.hear(value);
        }
      },
      hear(value: string) {
        unseen.push(value);
        if (keepsUp) queueMicrotask(() => made.catchUp());
      },
      /** The writes that landed elsewhere show here, each with its `storage` event. */
      catchUp() {
        for (const value of unseen.splice(0)) {
          if (!views.has(made)) return;
          shown = value;
          const event = Object.assign(new Event('storage'), {
            key: LIST,
            newValue: value,
            storageArea: storage,
          });
          events.dispatchEvent(event);
        }
      },
      close: () => views.delete(made),
    };
    views.add(made);
    return made;
  }
  return { committed, view };
}
