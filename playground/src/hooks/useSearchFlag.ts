import { useCallback, useState } from 'react';

/**
 * A switch kept in the page's URL (`?name=value` when on, nothing when off, or the other way
 * round with `whenAbsent: true`), so a tab opened from here, or a reload, does the same.
 */
export function useSearchFlag(
  name: string,
  { value, whenAbsent }: { value: string; whenAbsent: boolean },
): [boolean, (on: boolean) => void] {
  const read = () => {
    const present = new URLSearchParams(window.location.search).get(name) === value;
    return whenAbsent ? !present : present;
  };
  const [on, setState] = useState(read);
  const setOn = useCallback(
    (next: boolean) => {
      const url = new URL(window.location.href);
      if (next === whenAbsent) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
      window.history.replaceState(null, '', url);
      setState(next);
    },
    [name, value, whenAbsent],
  );
  return [on, setOn];
}

/** Whether this page shares one connection with the playground's other tabs (`?tabs=own`: not). */
export const useShareParam = () => useSearchFlag('tabs', { value: 'own', whenAbsent: true });

/** Whether the cache is kept in localStorage, so a reload starts warm (`?persist=1`). */
export const usePersistParam = () => useSearchFlag('persist', { value: '1', whenAbsent: false });
