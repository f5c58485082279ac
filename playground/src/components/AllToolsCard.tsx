import { useCallServerTool, useServerElicitations, useServerTools } from '../servers';
import { Card } from './Card';
import { ElicitationForm } from './ElicitationForm';

/**
 * Every server's tools in one list under qualified names (`server__tool`, what a model would
 * be given), with each server's list state beside it; a call by qualified name goes to its
 * server, and any server's question shows here, saying who asks.
 */
export function AllToolsCard() {
  const { tools, servers } = useServerTools();
  const call = useCallServerTool();
  const questions = useServerElicitations();
  const result = call.data;
  return (
    <Card
      title="Tools of every server"
      testId="all-tools-card"
      className="span-2"
      subtitle={
        <>
          <code>useServerTools()</code>, <code>useCallServerTool()</code> and{' '}
          <code>useServerElicitations()</code>
        </>
      }
    >
      <ul className="row server-lists" data-testid="tool-lists">
        {servers.map((list) => (
          <li
            key={list.serverId}
            className="pill"
            data-testid={`tool-list-${list.serverId}`}
            data-status={list.status}
            title={list.error?.message}
          >
            {list.serverName}: {list.status}
            {list.error ? ' (failed)' : ''}
          </li>
        ))}
      </ul>
      <table className="table" data-testid="all-tools">
        <thead>
          <tr>
            <th>qualified name</th>
            <th>server</th>
            <th>description</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {tools.map((tool) => (
            <tr key={tool.qualifiedName} data-testid="tool-row" data-server={tool.serverId}>
              <td>
                <code data-testid="tool-qualified-name">{tool.qualifiedName}</code>
              </td>
              <td>{tool.serverName}</td>
              <td className="muted small">{tool.item.description ?? ''}</td>
              <td>
                <button
                  type="button"
                  data-testid={`call-${tool.qualifiedName}`}
                  disabled={call.isPending}
                  onClick={() => call.mutate({ name: tool.qualifiedName })}
                >
                  Call
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {questions.map((question) => (
        <div key={`${question.serverId}:${question.id}`} data-testid="server-question">
          <p className="muted small">
            <strong data-testid="server-question-from">{question.serverName}</strong> asks:
          </p>
          <ElicitationForm elicitation={question} />
        </div>
      ))}
      {call.variables && (
        <div className="meta" data-testid="all-tools-call" data-state={call.status}>
          <code>{call.variables.name}</code> {call.status}
        </div>
      )}
      {result && call.isSuccess && (
        <pre className={result.isError ? 'error' : 'result'} data-testid="all-tools-result">
          {result.content
            .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
            .join('\n')}
        </pre>
      )}
      {call.error && (
        <div className="error" data-testid="all-tools-error" role="alert">
          {call.error.message}
        </div>
      )}
    </Card>
  );
}
