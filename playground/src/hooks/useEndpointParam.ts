import { useCallback, useState } from 'react';
import { type EndpointId, isEndpointId } from '../../shared/demo';

/** The endpoint in use, kept in `?endpoint=` so a reload (or a shared link) keeps it. */
export function useEndpointParam(): [EndpointId, (endpoint: EndpointId) => void] {
  const [endpoint, setState] = useState<EndpointId>(() => {
    const value = new URLSearchParams(window.location.search).get('endpoint');
    return isEndpointId(value) ? value : 'modern';
  });
  const setEndpoint = useCallback((next: EndpointId) => {
    const url = new URL(window.location.href);
    url.searchParams.set('endpoint', next);
    window.history.replaceState(null, '', url);
    setState(next);
  }, []);
  return [endpoint, setEndpoint];
}
