import { useCallback, useState } from 'react';

/**
 * Whether this page shares one connection with the playground's other tabs (on unless the URL
 * says `?tabs=own`), kept in the URL so a tab opened from here, or a reload, does the same.
 */
export function useShareParam(): [boolean, (share: boolean) => void] {
  const [share, setState] = useState(
    () => new URLSearchParams(window.location.search).get('tabs') !== 'own',
  );
  const setShare = useCallback((next: boolean) => {
    const url = new URL(window.location.href);
    if (next) url.searchParams.delete('tabs');
    else url.searchParams.set('tabs', 'own');
    window.history.replaceState(null, '', url);
    setState(next);
  }, []);
  return [share, setShare];
}
