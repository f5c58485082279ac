import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { useState } from 'react';
import { McpApp, type McpUiHostContext } from '../apps';

const HOST_CONTEXT: McpUiHostContext = {
  theme: 'light',
  displayMode: 'inline',
  availableDisplayModes: ['inline'],
  platform: 'web',
  containerDimensions: { maxHeight: 480 },
};

/**
 * One tool call's MCP App view, as the playground hosts it: the call as it stands (input,
 * result or the error that ended it), the page's theme, a link opened only once the user agrees,
 * and the view's messages listed under it (a chat host would add them to the conversation).
 */
export function AppView(props: {
  tool: string | Tool;
  scope?: string;
  sandbox: string;
  input: Record<string, unknown> | undefined;
  result: CallToolResult | undefined;
  error: Error | null;
  testId: string;
}) {
  const [messages, setMessages] = useState<string[]>([]);
  return (
    <div className="app-view" data-testid={props.testId}>
      <McpApp
        tool={props.tool}
        scope={props.scope}
        sandbox={props.sandbox}
        input={props.input}
        result={props.result}
        cancelled={props.error ? props.error.message : undefined}
        hostContext={HOST_CONTEXT}
        onOpenLink={(url) => {
          if (!window.confirm(`The app wants to open ${url}`)) return false;
          window.open(url, '_blank', 'noopener,noreferrer');
          return true;
        }}
        onMessage={(params) => {
          const text = params.content
            .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
            .join(' ');
          setMessages((list) => [...list, text]);
          return {};
        }}
        className="app-frame"
      />
      {messages.length > 0 && (
        <ul className="app-messages muted small" data-testid={`${props.testId}-messages`}>
          {messages.map((text, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: an append-only log
            <li key={index}>the app says: {text}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
