import { useState } from 'react';
import { EXAMPLE_APPS, type ExampleAppId } from '../../shared/demo';
import { MCP_APPS_EXTENSION } from '../apps';
import { useExampleServers } from '../hooks/useAppsInfo';
import { createServerRequests, McpProvider, useCallTool, useMcp } from '../mcp';
import { AppView } from './AppView';

/**
 * The official example app servers from npm, each behind its own `<McpProvider scope>` (another
 * server, on another origin): call its tool, and its view renders inline and calls the tool
 * again through the bridge ("Get Server Time" inside the view). Started and connected on demand.
 */
export function ExampleApps(props: { sandbox: string }) {
  const [open, setOpen] = useState(false);
  // A host of MCP Apps says so: a server may offer its UI tools only to clients that declare it.
  const [requests] = useState(() => createServerRequests({ extensions: MCP_APPS_EXTENSION }));
  const servers = useExampleServers(open);
  if (!open) {
    return (
      <div className="row">
        <button type="button" data-testid="example-apps-open" onClick={() => setOpen(true)}>
          Connect the example app servers
        </button>
        <span className="muted small">
          <code>@modelcontextprotocol/server-basic-react</code> and <code>-basic-vanillajs</code>,
          each in its own process
        </span>
      </div>
    );
  }
  if (!servers.data) {
    return (
      <span className="muted small">
        {servers.error ? servers.error.message : 'starting the example app servers…'}
      </span>
    );
  }
  const examples = servers.data;
  return (
    <div className="example-apps">
      {EXAMPLE_APPS.map((example) => {
        const where = examples[example.id];
        if (!where) return null;
        if ('error' in where) {
          return (
            <div key={example.id} className="error small">
              {where.error}
            </div>
          );
        }
        return (
          <McpProvider
            key={example.id}
            url={where.url}
            scope={example.id}
            serverRequests={requests}
          >
            <ExampleApp
              id={example.id}
              label={example.label}
              tool={example.tool}
              sandbox={props.sandbox}
            />
          </McpProvider>
        );
      })}
    </div>
  );
}

function ExampleApp(props: { id: ExampleAppId; label: string; tool: string; sandbox: string }) {
  const call = useCallTool({ scope: props.id });
  const { status } = useMcp(props.id);
  return (
    <div className="example-app" data-testid={`example-${props.id}`} data-status={status}>
      <div className="row">
        <button
          type="button"
          data-testid={`example-${props.id}-call`}
          disabled={status !== 'ready' || call.isPending}
          onClick={() => call.mutate({ name: props.tool, arguments: {} })}
        >
          Call <code>{props.tool}</code>
        </button>
        <span className="muted small">
          <code>@modelcontextprotocol/{props.label}</code> · {status}
        </span>
      </div>
      {call.variables && (
        <AppView
          key={call.submittedAt}
          tool={props.tool}
          scope={props.id}
          sandbox={props.sandbox}
          input={call.variables.arguments}
          result={call.data}
          error={call.error}
          testId={`example-${props.id}-app`}
        />
      )}
    </div>
  );
}
