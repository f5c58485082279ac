import type { StoredResource } from '../../test/servers/index';
import { type Board, URIS } from '../shared/demo';
import { counterAppHtml } from './counterApp';

export const INITIAL_CONFIG = {
  theme: 'dark',
  refreshSeconds: 30,
  features: { search: true, betaPanel: false },
};

export function reportText(version: number): string {
  return `Report #${version}\ngenerated ${new Date().toISOString()}\nstatus: all systems nominal`;
}

/**
 * Everyone sees the same demo content, so it is marked `cacheScope: 'public'` (a 2026-07-28
 * server says `private` when nothing is said): the page's warm reload may keep it.
 */
export const PUBLIC = { cacheScope: 'public' } as const;

export function seedResources(imageBase64: string, board: Board): StoredResource[] {
  const resources: StoredResource[] = [
    {
      uri: URIS.clock,
      name: 'clock',
      title: 'Server clock',
      description: 'Changes on its own every second',
      mimeType: 'text/plain',
      text: new Date().toISOString(),
    },
    {
      uri: URIS.counter,
      name: 'counter',
      title: 'Counter',
      description: 'Changes on demand: +1 or a burst of 100',
      mimeType: 'text/plain',
      text: '0',
    },
    {
      uri: URIS.config,
      name: 'config',
      title: 'App config',
      description: 'Editable JSON, shown in two panels',
      mimeType: 'application/json',
      text: JSON.stringify(INITIAL_CONFIG, null, 2),
    },
    {
      uri: URIS.image,
      name: 'logo',
      title: 'Logo',
      description: 'A binary resource (PNG as a base64 blob)',
      mimeType: 'image/png',
      blob: imageBase64,
    },
    {
      uri: URIS.flaky,
      name: 'report',
      title: 'Flaky report',
      description: 'Its reads fail on demand',
      mimeType: 'text/plain',
      text: reportText(1),
    },
    {
      uri: URIS.board,
      name: 'board',
      title: 'Team board',
      description: 'Changed by the rename_board tool, with what the user answered',
      mimeType: 'application/json',
      text: JSON.stringify(board, null, 2),
    },
    {
      uri: URIS.counterApp,
      name: 'counter-app',
      title: 'Counter app (MCP App view)',
      description: 'The view of the show_counter tool: HTML the host runs in its sandbox',
      mimeType: 'text/html;profile=mcp-app',
      text: counterAppHtml(),
    },
  ];
  return resources.map((resource) => ({ ...resource, ...PUBLIC }));
}

export const SEED_NOTES = [
  'Welcome! Add a note and watch the resource list change.',
  '<b>Not bold.</b> <img src=x onerror="alert(1)"> Resource text is shown as text, never as HTML.',
];
