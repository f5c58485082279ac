/**
 * What MCP Apps metadata says, read defensively: a tool's view (`_meta.ui.resourceUri`), who may
 * call it (`_meta.ui.visibility`), and the view itself from a `resources/read` answer.
 */
import type {
  LoggingMessageNotification,
  ReadResourceResult,
  Tool,
} from '@modelcontextprotocol/client';
import { McpAppError } from './appErrors';
import { type AppCsp, sanitizeCsp } from './csp';

export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * What a host that renders MCP Apps declares (`capabilities.extensions`): pass it as
 * `createServerRequests({ extensions: MCP_APPS_EXTENSION })`. A server SHOULD offer its UI tools
 * only to clients that declare it.
 */
export const MCP_APPS_EXTENSION = {
  'io.modelcontextprotocol/ui': { mimeTypes: [APP_MIME_TYPE] },
};

/** The deprecated flat key some servers still send beside `_meta.ui.resourceUri`. */
const FLAT_RESOURCE_URI_KEY = 'ui/resourceUri';

const uiMetaOf = (meta: unknown): Record<string, unknown> | undefined => {
  const ui = (meta as { ui?: unknown } | undefined)?.ui;
  return ui !== null && typeof ui === 'object' ? (ui as Record<string, unknown>) : undefined;
};

/**
 * The `ui://` URI of a tool's view, or undefined when it declares none. A declaration that is
 * not a `ui://` URI is an error: rendering something else would fetch whatever it names.
 */
export function viewUriOf(tool: Pick<Tool, 'name' | '_meta'>): string | undefined {
  const declared = uiMetaOf(tool._meta)?.resourceUri ?? tool._meta?.[FLAT_RESOURCE_URI_KEY];
  if (declared === undefined) return undefined;
  if (typeof declared === 'string' && declared.startsWith('ui://')) return declared;
  throw new McpAppError(
    'NO_UI',
    `tool "${tool.name}" declares ${JSON.stringify(declared)} as its view, not a ui:// URI`,
  );
}

/** `_meta.ui.visibility`: absent means model and app; a list without "app" keeps views out. */
export function visibleToApps(tool: Pick<Tool, '_meta'>): boolean {
  const visibility = uiMetaOf(tool._meta)?.visibility;
  return !Array.isArray(visibility) || visibility.includes('app');
}

/** A view as the sandbox loads it. */
export interface AppTemplate {
  uri: string;
  html: string;
  /** The declared policy, origins only (see csp.ts). */
  csp: AppCsp;
  /** Entries of the declaration that were not origins and were left out. */
  cspDropped: string[];
  prefersBorder: boolean | undefined;
}

/** `text/html;profile=mcp-app`, allowing the spellings MIME allows (case, spaces, quotes). */
export function isAppMimeType(mimeType: unknown): boolean {
  if (typeof mimeType !== 'string') return false;
  const [type, ...params] = mimeType.split(';').map((part) => part.trim().toLowerCase());
  return (
    type === 'text/html' &&
    params.some((param) => param.replace(/\s*=\s*/, '=').replace(/"/g, '') === 'profile=mcp-app')
  );
}

function decodeBase64(blob: string): string {
  const bytes = Uint8Array.from(atob(blob), (char) => char.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** The view in a read of `uri`, or a clear error for anything that is not one. */
export function templateOf(uri: string, result: ReadResourceResult): AppTemplate {
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  const content = contents.find((entry) => entry.uri === uri) ?? contents[0];
  if (!content) throw new McpAppError('NOT_AN_APP', `${uri} has no content`);
  if (!isAppMimeType(content.mimeType)) {
    throw new McpAppError(
      'NOT_AN_APP',
      `${uri} is ${content.mimeType ? `"${content.mimeType}"` : 'of no declared type'}, not an MCP App (${APP_MIME_TYPE})`,
    );
  }
  let html: string;
  try {
    html = 'text' in content ? content.text : decodeBase64(content.blob);
  } catch (error) {
    throw new McpAppError('NOT_AN_APP', `${uri}: its blob is not base64 HTML`, { cause: error });
  }
  if (typeof html !== 'string' || html.trim() === '') {
    throw new McpAppError('NOT_AN_APP', `${uri} is empty`);
  }
  const ui = uiMetaOf(content._meta);
  const { csp, dropped } = sanitizeCsp(ui?.csp);
  const prefersBorder = typeof ui?.prefersBorder === 'boolean' ? ui.prefersBorder : undefined;
  return { uri, html, csp, cspDropped: dropped, prefersBorder };
}

/**
 * The logger of the host's own warnings about a view in `onLog`, beside the view's own log: what
 * of its declared CSP was left out (`cspDroppedLog`). A view can log under any name, this one too.
 */
export const HOST_LOGGER = 'mcp-react-query/apps';
const TOLD_ENTRIES = 10;
const TOLD_CHARS = 100;

/**
 * The warning for the host's log when the view's declared CSP lost entries (csp.ts keeps plain
 * origins only): the view's requests to them are blocked, and nothing else would say why. The
 * entries are the server's text: at most 10 are told, each cut at 100 characters.
 */
export function cspDroppedLog(
  template: Pick<AppTemplate, 'uri' | 'cspDropped'>,
): LoggingMessageNotification['params'] | undefined {
  const dropped = template.cspDropped;
  if (dropped.length === 0) return undefined;
  const told = dropped
    .slice(0, TOLD_ENTRIES)
    .map((entry) => (entry.length > TOLD_CHARS ? `${entry.slice(0, TOLD_CHARS - 1)}…` : entry));
  if (dropped.length > TOLD_ENTRIES) told.push(`and ${dropped.length - TOLD_ENTRIES} more`);
  return {
    level: 'warning',
    logger: HOST_LOGGER,
    data: `${template.uri}: its server's CSP declares what is not a plain origin (scheme://host[:port]), which the view's sandbox leaves out, so the view's requests to it are blocked: ${told.join('; ')}`,
  };
}
