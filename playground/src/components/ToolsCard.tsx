import type { Tool } from '@modelcontextprotocol/client';
import { type Board, TOOLS, URIS } from '../../shared/demo';
import { viewUriOf } from '../apps';
import { useAppsInfo } from '../hooks/useAppsInfo';
import { useCallTool, useElicitations, useResource, useToolList } from '../mcp';
import { textOf } from '../resourceText';
import { AppView } from './AppView';
import { Card } from './Card';
import { ElicitationForm } from './ElicitationForm';
import { ExampleApps } from './ExampleApps';

function parseBoard(text: string | undefined): Board | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as Board;
  } catch {
    return undefined;
  }
}

/** Whether a tool has an MCP App view (`_meta.ui.resourceUri`). */
function hasView(tools: Tool[] | undefined, name: string | undefined): boolean {
  const tool = tools?.find((entry) => entry.name === name);
  try {
    return tool !== undefined && viewUriOf(tool) !== undefined;
  } catch {
    return true; // an invalid view: McpApp shows why
  }
}

const BUTTONS = [
  { name: TOOLS.rename, label: 'Rename the board…', testId: 'tool-rename', hint: 'asks you' },
  {
    name: TOOLS.counterApp,
    label: 'Show the counter app',
    testId: 'tool-app',
    hint: 'an MCP App view',
  },
  { name: TOOLS.failing, label: 'Check the links', testId: 'tool-failing', hint: 'isError: true' },
  { name: TOOLS.missing, label: 'Call a missing tool', testId: 'tool-missing', hint: 'an error' },
] as const;

/**
 * Tools through the hooks: `useCallTool()` runs one (a TanStack mutation, with the latest
 * progress), and while the server waits for the user, `useElicitations()` lists its question,
 * rendered as a form from the requested schema. `rename_board` changes `board://team` with the
 * answer, and the board above updates like any live resource.
 *
 * The two ways a call goes wrong look different on purpose: a tool that ran and reports a
 * failure is data (`data.isError`); a call that failed (unknown tool, transport) is `error`.
 *
 * A tool with an MCP App view (`show_counter`) shows it inline under its call, through
 * `<McpApp>`; so do the official example app servers from npm, each on its own provider.
 */
export function ToolsCard() {
  const call = useCallTool();
  const tools = useToolList();
  const apps = useAppsInfo();
  const elicitations = useElicitations();
  const boardQuery = useResource(URIS.board);
  const board = parseBoard(textOf(boardQuery.data));
  const result = call.data;
  const resultText = result?.content
    .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
    .join('\n');
  return (
    <Card
      title="Tools"
      testId="tools-card"
      className="span-2"
      subtitle={
        <>
          <code>useCallTool()</code> and <code>useElicitations()</code>; the board is{' '}
          <code>{URIS.board}</code>
        </>
      }
    >
      <div
        className="board"
        data-testid="board"
        data-fetching={String(boardQuery.isFetching)}
        style={board ? { borderColor: board.color } : undefined}
      >
        {board ? (
          <>
            <strong data-testid="board-title">{board.title}</strong>
            <span className="muted small" data-testid="board-style">
              {board.color} · {board.columns} columns · {board.notify ? 'team notified' : 'quiet'}
            </span>
          </>
        ) : (
          <span className="muted">loading the board…</span>
        )}
      </div>
      <div className="row">
        {BUTTONS.map((button) => (
          <button
            key={button.name}
            type="button"
            className={button.name === TOOLS.rename ? 'primary' : undefined}
            data-testid={button.testId}
            disabled={call.isPending}
            title={`${button.name}: ${button.hint}`}
            onClick={() => call.mutate({ name: button.name })}
          >
            {button.label}
          </button>
        ))}
      </div>
      <div
        className="meta"
        data-testid="tool-call"
        data-state={call.status}
        data-tool={call.variables?.name ?? ''}
      >
        <span>
          {call.variables ? (
            <>
              <code>{call.variables.name}</code> {call.status}
            </>
          ) : (
            'no call yet'
          )}
        </span>
        {call.progress && (
          <span className="pill" data-testid="tool-progress">
            progress {call.progress.progress}
            {call.progress.total !== undefined && ` / ${call.progress.total}`}
            {call.progress.message && ` · ${call.progress.message}`}
          </span>
        )}
      </div>
      {elicitations.map((elicitation) => (
        <ElicitationForm key={elicitation.id} elicitation={elicitation} />
      ))}
      {result && call.isSuccess && (
        <div
          className={result.isError ? 'error' : 'result'}
          data-testid="tool-result"
          data-is-error={String(result.isError === true)}
        >
          <strong>
            {result.isError ? 'isError: the tool ran and reports a failure' : 'result'}
          </strong>
          <pre className="text">{resultText}</pre>
        </div>
      )}
      {call.error && (
        <div className="error" data-testid="tool-error" role="alert">
          <strong>error: the call itself failed</strong> {call.error.message}
        </div>
      )}
      {call.variables && apps.data && hasView(tools.data, call.variables.name) && (
        <AppView
          key={call.submittedAt}
          tool={call.variables.name}
          sandbox={apps.data.sandbox}
          input={call.variables.arguments ?? {}}
          result={call.data}
          error={call.error}
          testId="tool-app-view"
        />
      )}
      <h3 className="subhead">MCP Apps from npm</h3>
      {apps.data ? (
        <ExampleApps sandbox={apps.data.sandbox} />
      ) : (
        <span className="muted small">{apps.error?.message ?? 'finding the sandbox…'}</span>
      )}
    </Card>
  );
}
