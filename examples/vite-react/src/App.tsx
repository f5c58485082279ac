import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { useMcp, useResource, useResourceList } from 'mcp-react-query';

function textOf(result: ReadResourceResult): string {
  const content = result.contents[0];
  return content && 'text' in content ? content.text : '';
}

export function App({ server }: { server: string }) {
  const { status, era, error } = useMcp();
  const config = useResource('config://app', { select: textOf });
  const clock = useResource('clock://now', { select: textOf });
  const resources = useResourceList({ select: (list) => list.map((resource) => resource.uri) });
  return (
    <main style={{ font: '14px/1.5 system-ui, sans-serif', margin: 24 }}>
      <h1>mcp-react-query example</h1>
      <p>
        <span data-testid="status" data-era={era ?? ''}>
          {status}
        </span>{' '}
        {era && `(${era === 'modern' ? '2026-07-28' : '2025'})`} · {server}
        {error && <span> · {error.message}</span>}
      </p>
      <h2>clock://now</h2>
      <p data-testid="clock">{clock.data ?? '…'}</p>
      <h2>config://app</h2>
      <pre data-testid="config">{config.isPending ? '…' : config.data}</pre>
      <h2>
        Resources (<span data-testid="resource-count">{resources.data?.length ?? 0}</span>)
      </h2>
      <ul data-testid="resources">
        {resources.data?.map((uri) => (
          <li key={uri}>{uri}</li>
        ))}
      </ul>
    </main>
  );
}
