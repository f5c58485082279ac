import type { Tool } from '@modelcontextprotocol/client';
import type { McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';
import { type CSSProperties, useEffect, useRef, useState } from 'react';
import type { McpCacheSync } from '../core/mcpCacheSync';
import type { McpAppError } from './appErrors';
import { FrameTransport } from './frameTransport';
import type { AppLimits } from './limits';
import type { AppTemplate } from './uiResource';
import {
  type AppHostHandlers,
  type ToolCallState,
  ViewHost,
  type ViewHostOptions,
  type ViewStatus,
} from './viewHost';

export interface AppFrameProps extends AppHostHandlers, ToolCallState {
  sync: McpCacheSync;
  tool: Tool;
  template: AppTemplate;
  /** The sandbox proxy page, already checked to be on another origin. */
  sandbox: URL;
  hostContext: McpUiHostContext | undefined;
  limits: AppLimits | undefined;
  initTimeoutMs: number | undefined;
  title: string;
  className: string | undefined;
  style: CSSProperties | undefined;
  onError: ((error: McpAppError) => void) | undefined;
  renderError: (error: McpAppError) => React.ReactNode;
}

/**
 * The most a view's `size-changed` may make its frame grow when the host gives no
 * `containerDimensions.maxHeight`: a view is untrusted, and a frame a billion pixels high pushes
 * the host's page out of reach. Content taller than this scrolls inside the view.
 */
const DEFAULT_MAX_HEIGHT = 10_000;

/** Callbacks the view may use, read from the latest props; absent ones stay refused. */
function handlersOf(latest: { current: AppFrameProps }): AppHostHandlers {
  const props = latest.current;
  const handlers: AppHostHandlers = {};
  if (props.onMessage) handlers.onMessage = (params) => latest.current.onMessage?.(params);
  if (props.onOpenLink) {
    handlers.onOpenLink = (url) => latest.current.onOpenLink?.(url) ?? false;
  }
  if (props.onUpdateModelContext) {
    handlers.onUpdateModelContext = (params) => latest.current.onUpdateModelContext?.(params);
  }
  handlers.onLog = (params) => latest.current.onLog?.(params);
  handlers.allowToolCall = (tool, args) => latest.current.allowToolCall?.(tool, args) ?? true;
  handlers.allowResource = (uri) => latest.current.allowResource?.(uri) ?? true;
  return handlers;
}

/**
 * One view in its sandbox frame. The frame's `src` is set only once the host listens, so the
 * proxy's first message cannot be missed. Whatever the view is made of (template, tool, server,
 * sandbox) is fixed for an AppFrame: McpApp keys it, so a change (the server changed the view)
 * is a new frame and the view reloads.
 */
export function AppFrame(props: AppFrameProps) {
  const frame = useRef<HTMLIFrameElement>(null);
  const host = useRef<ViewHost | undefined>(undefined);
  const latest = useRef(props);
  latest.current = props;
  const [status, setStatus] = useState<ViewStatus>({ status: 'starting' });
  const [height, setHeight] = useState<number | undefined>(undefined);
  const { sync, tool, template, sandbox } = props;

  useEffect(() => {
    const iframe = frame.current;
    if (!iframe) return;
    const options: ViewHostOptions = {
      sync,
      tool,
      template,
      transport: new FrameTransport(iframe, sandbox.origin),
      hostContext: latest.current.hostContext,
      limits: latest.current.limits,
      initTimeoutMs: latest.current.initTimeoutMs,
      // Only the current view's status counts (StrictMode starts one and closes it at once).
      onStatus: (next) => {
        if (host.current === view) setStatus(next);
      },
      onSizeChange: (size) => {
        if (size.height !== undefined) setHeight(size.height);
        latest.current.onSizeChange?.(size);
      },
      ...handlersOf(latest),
    };
    const view: ViewHost = new ViewHost(options);
    host.current = view;
    setStatus(view.status);
    view.setCall(callOf(latest.current));
    void view.start();
    const url = new URL(sandbox);
    url.searchParams.set('host', window.location.origin);
    url.searchParams.set('csp', JSON.stringify(template.csp));
    iframe.src = url.href;
    return () => {
      host.current = undefined;
      void view.close();
    };
  }, [sync, tool, template, sandbox]);

  const { input, partialInput, result, cancelled, hostContext } = props;
  useEffect(() => {
    host.current?.setCall({ input, partialInput, result, cancelled });
  }, [input, partialInput, result, cancelled]);
  useEffect(() => {
    host.current?.setHostContext(hostContext);
  }, [hostContext]);
  useEffect(() => {
    if (status.status === 'error') latest.current.onError?.(status.error);
  }, [status]);

  if (status.status === 'error') return props.renderError(status.error);
  const dimensions = hostContext?.containerDimensions as
    | { height?: number; maxHeight?: number }
    | undefined;
  const shown =
    dimensions?.height ?? Math.min(height ?? 150, dimensions?.maxHeight ?? DEFAULT_MAX_HEIGHT);
  return (
    <iframe
      ref={frame}
      title={props.title}
      className={props.className}
      data-mcp-app={status.status}
      sandbox="allow-scripts allow-same-origin allow-forms"
      referrerPolicy="no-referrer"
      style={{
        display: 'block',
        width: '100%',
        height: `${shown}px`,
        border: template.prefersBorder ? '1px solid currentColor' : 0,
        ...props.style,
      }}
    />
  );
}

const callOf = ({ input, partialInput, result, cancelled }: ToolCallState): ToolCallState => ({
  input,
  partialInput,
  result,
  cancelled,
});
