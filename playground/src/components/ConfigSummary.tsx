import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { URIS } from '../../shared/demo';
import { useResource } from '../mcp';
import { textOf } from '../resourceText';
import { Card } from './Card';

type Summary = { entries: [string, string][] } | { problem: string };

function summarise(result: ReadResourceResult): Summary {
  try {
    const value: unknown = JSON.parse(textOf(result) ?? '');
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { problem: 'not a JSON object' };
    }
    return { entries: Object.entries(value).map(([key, v]) => [key, JSON.stringify(v)]) };
  } catch (error) {
    return { problem: `invalid JSON: ${(error as Error).message}` };
  }
}

/** A third view of `config://app` through `select`: same query, same subscription. */
export function ConfigSummary() {
  const query = useResource(URIS.config, { select: summarise });
  const summary = query.data;
  return (
    <Card
      title="Config summary"
      subtitle={
        <>
          <code>{URIS.config}</code> via <code>select</code>
        </>
      }
      testId="panel-config-summary"
      data={{ 'data-status': query.status }}
    >
      <div className="content" data-testid="content">
        {summary && 'problem' in summary && <div className="error">{summary.problem}</div>}
        {summary && 'entries' in summary && (
          <table className="kv">
            <tbody>
              {summary.entries.map(([key, value]) => (
                <tr key={key}>
                  <th>{key}</th>
                  <td className="kv-value">
                    <code>{value}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Card>
  );
}
