/**
 * The Servers page's setup: one sign-in for every server (one callback page for all of them)
 * and the servers the page offers to add with one click.
 */
import {
  BROKEN_PATH,
  ENDPOINTS,
  PROTECTED_ENDPOINTS,
  SECOND_ENDPOINT,
  SERVERS_CALLBACK_PATH,
} from '../shared/demo';
import { createServerSignIn, type McpServerInput } from './servers';

export const SERVERS_STORAGE_KEY = 'playground-servers';

/** Created once per page: the Servers page and its callback page share it. */
export const serverSignIn = createServerSignIn({
  redirectUrl: new URL(SERVERS_CALLBACK_PATH, window.location.origin),
  storageKey: `${SERVERS_STORAGE_KEY}:oauth`,
  clientMetadata: { client_name: 'mcp-react-query playground (servers)' },
});

const at = (path: string) => new URL(path, window.location.origin).href;

/** One click each: the demo server, a second instance, the protected one, a broken URL. */
export const PRESETS: { key: string; label: string; server: McpServerInput }[] = [
  { key: 'demo', label: 'Demo server', server: { name: 'Demo', url: at(ENDPOINTS.modern.path) } },
  {
    key: 'legacy',
    label: 'Demo (2025)',
    server: { name: 'Demo 2025', url: at(ENDPOINTS.legacy.path) },
  },
  {
    key: 'second',
    label: 'Second instance',
    server: { name: 'Second instance', url: at(SECOND_ENDPOINT.path) },
  },
  {
    key: 'protected',
    label: 'Protected',
    server: { name: 'Protected', url: at(PROTECTED_ENDPOINTS.modern.path) },
  },
  { key: 'broken', label: 'Broken URL', server: { name: 'Broken', url: at(BROKEN_PATH) } },
];
