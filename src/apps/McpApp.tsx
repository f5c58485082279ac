import type { Tool } from '@modelcontextprotocol/client';
import type { McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';
import { replaceEqualDeep, useQuery } from '@tanstack/react-query';
import { type CSSProperties, type ReactNode, useEffect, useMemo, useRef } from 'react';
import { errorMessage, isNotFound } from '../core/errors';
import type { McpCacheSync } from '../core/mcpCacheSync';
import { toolListQueryOptions } from '../core/queryOptions';
import { useMcpSync } from '../react/context';
import { useResource } from '../react/useResource';
import { AppFrame } from './AppFrame';
import { McpAppError } from './appErrors';
import type { AppLimits } from './limits';
import { type AppTemplate, templateOf, viewUriOf } from './uiResource';
import type { AppHostHandlers, ToolCallState } from './viewHost';

export interface McpAppProps extends AppHostHandlers, ToolCallState {
  /** The tool that was called: its name, or its entry from this server's `tools/list`. */
  tool: string | Tool;
  /**
   * The sandbox proxy page (`mcp-react-query/apps/sandbox` serves it), on another origin than
   * this page. Views run only inside it.
   */
  sandbox: string | URL;
  /** The `<McpProvider scope>` whose server the tool belongs to (default: the nearest). */
  scope?: string;
  /** Theme, display mode, styles, locale… as the view should see them (`McpUiHostContext`). */
  hostContext?: McpUiHostContext;
  limits?: AppLimits;
  /**
   * How long the sandbox and the view may take to initialise (default 10 s; `Infinity`: as long
   * as a timer can wait, 24.8 days).
   */
  initTimeoutMs?: number;
  /** Why nothing is shown, whatever the reason; the component also renders it. */
  onError?: (error: McpAppError) => void;
  /** What to show instead of an error's default message. */
  renderError?: (error: McpAppError) => ReactNode;
  /** What to show while the tool list and the view's HTML load. */
  fallback?: ReactNode;
  title?: string;
  className?: string;
  style?: CSSProperties;
}

type Resolved = { tool: Tool; uri: string } | { error: McpAppError } | undefined;

function resolveTool(
  given: string | Tool,
  tools: Tool[] | undefined,
  loadError: unknown,
): Resolved {
  const name = typeof given === 'string' ? given : given.name;
  if (!tools) {
    return loadError
      ? { error: new McpAppError('READ_FAILED', `the tool list: ${errorMessage(loadError)}`) }
      : undefined;
  }
  // The server's own entry, also when one was passed in: a tool of another server (or one
  // whose view differs from this server's) is not this server's to show.
  const tool = tools.find((entry) => entry.name === name);
  if (!tool || (typeof given !== 'string' && viewUri(given) !== viewUri(tool))) {
    return { error: new McpAppError('UNKNOWN_TOOL', `no tool "${name}" on this server`) };
  }
  try {
    const uri = viewUriOf(tool);
    if (uri) return { tool, uri };
    return { error: new McpAppError('NO_UI', `tool "${name}" has no ui:// view`) };
  } catch (error) {
    return { error: error as McpAppError };
  }
}

function viewUri(tool: Tool): unknown {
  try {
    return viewUriOf(tool);
  } catch {
    return undefined;
  }
}

/** The sandbox URL, if it is one and not on this page's origin (the spec requires another). */
function sandboxUrl(sandbox: string): URL | McpAppError {
  let url: URL;
  try {
    url = new URL(sandbox, window.location.href);
  } catch {
    return new McpAppError('NO_SANDBOX', `the sandbox URL ${sandbox} is not a URL`);
  }
  if (url.origin === window.location.origin || url.origin === 'null') {
    return new McpAppError(
      'NO_SANDBOX',
      `the sandbox must be on another origin than this page (${window.location.origin})`,
    );
  }
  return url;
}

function templateFrom(uri: string, data: unknown): AppTemplate | McpAppError {
  try {
    return templateOf(uri, data as Parameters<typeof templateOf>[1]);
  } catch (error) {
    return error instanceof McpAppError
      ? error
      : new McpAppError('NOT_AN_APP', `${uri}: ${errorMessage(error)}`);
  }
}

const defaultError = (error: McpAppError) => (
  <div role="alert" data-mcp-app="error" data-code={error.code}>
    {error.message}
  </div>
);

/**
 * A tool call's MCP App view (`io.modelcontextprotocol/ui`), on a live cache. The view's HTML is
 * the tool's `ui://` resource read through the cache: read once however often it is shown, kept
 * by a persister when the server marks it public, and reloaded when the server says it changed.
 * The view's own reads come from the same cache, and its subscriptions are holds like any
 * component's (see viewHost.ts). It runs in the sandbox proxy on another origin, with the CSP
 * its server declared.
 */
export function McpApp(props: McpAppProps) {
  const sync = useMcpSync('McpApp', props.scope);
  const tools = useQuery(toolListQueryOptions({ scope: sync.keys.scope }), sync.queryClient);
  const resolved = resolveTool(props.tool, tools.data, tools.error);
  // By value: a URL object made anew each render must not restart the view.
  const href = String(props.sandbox);
  const sandbox = useMemo(
    () => (typeof window === 'undefined' ? undefined : sandboxUrl(href)),
    [href],
  );
  const error =
    resolved && 'error' in resolved
      ? resolved.error
      : sandbox instanceof McpAppError
        ? sandbox
        : undefined;
  useReported(error, props.onError);
  if (error) return (props.renderError ?? defaultError)(error);
  if (!resolved || 'error' in resolved || !sandbox || sandbox instanceof McpAppError) {
    return loading(props);
  }
  return <LoadedApp {...props} sync={sync} resolved={resolved} sandbox={sandbox} />;
}

interface LoadedAppProps extends Omit<McpAppProps, 'sandbox'> {
  sync: McpCacheSync;
  resolved: { tool: Tool; uri: string };
  sandbox: URL;
}

/** The tool's view, once known: its HTML through the cache, then the frame. */
function LoadedApp(props: LoadedAppProps) {
  const { sync, resolved } = props;
  const { uri } = resolved;
  // The view's HTML does not go stale by time: it is re-read when the server says it changed
  // (the observer holds its subscription) or when the cache lets it go.
  const html = useResource(uri, { scope: sync.keys.scope, staleTime: Number.POSITIVE_INFINITY });
  const template = useMemo(
    () => (html.data ? templateFrom(uri, html.data) : undefined),
    [uri, html.data],
  );
  // Whatever the view is made of is its identity: a change starts a new view (a new frame).
  const tool = useEqual(resolved.tool);
  const version = useVersion([template, tool, sync, props.sandbox.href]);
  let error: McpAppError | undefined;
  if (template instanceof McpAppError) error = template;
  else if (!template && html.error) {
    error = isNotFound(html.error)
      ? new McpAppError('NOT_FOUND', `${uri} was not found on the server`, { cause: html.error })
      : new McpAppError('READ_FAILED', `${uri}: ${errorMessage(html.error)}`, {
          cause: html.error,
        });
  }
  useReported(error, props.onError);
  const renderError = props.renderError ?? defaultError;
  if (error) return renderError(error);
  if (!template || template instanceof McpAppError) return loading(props);
  return (
    <AppFrame
      key={version}
      {...props}
      tool={tool}
      template={template}
      hostContext={props.hostContext}
      limits={props.limits}
      initTimeoutMs={props.initTimeoutMs}
      title={props.title ?? tool.title ?? tool.name}
      className={props.className}
      style={props.style}
      onError={props.onError}
      renderError={renderError}
    />
  );
}

const loading = (props: Pick<McpAppProps, 'fallback'>) =>
  props.fallback ?? <div data-mcp-app="loading">Loading the app…</div>;

/** Errors are derived anew each render: each distinct one is reported once. */
function useReported(error: McpAppError | undefined, onError: McpAppProps['onError']): void {
  const latest = useRef(onError);
  latest.current = onError;
  const reported = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (error && reported.current !== error.message) latest.current?.(error);
    reported.current = error?.message;
  });
}

/**
 * `value`, or the previous one while they are deep-equal. TanStack shares a refetched list's
 * entries by index: a tool added before this one makes its entry a new object, which must not
 * restart the view.
 */
function useEqual<T>(value: T): T {
  const kept = useRef(value);
  kept.current = replaceEqualDeep(kept.current, value);
  return kept.current;
}

/** A number that changes whenever one of `values` does (by identity), for keying a remount. */
function useVersion(values: unknown[]): number {
  const state = useRef({ values, version: 0 });
  const { current } = state;
  if (values.some((value, i) => !Object.is(value, current.values[i]))) {
    state.current = { values, version: current.version + 1 };
  }
  return state.current.version;
}
