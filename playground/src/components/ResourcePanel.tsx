import { useResource } from '../mcp';
import { Card } from './Card';
import { QueryMeta } from './QueryMeta';
import { ResourceContent } from './ResourceContent';

/** One live resource: `useResource(uri)` and nothing else. */
export function ResourcePanel(props: {
  uri: string;
  title: string;
  testId: string;
  big?: boolean;
}) {
  const query = useResource(props.uri);
  return (
    <Card
      title={props.title}
      subtitle={<code>{props.uri}</code>}
      testId={props.testId}
      data={{ 'data-status': query.status, 'data-fetching': String(query.isFetching) }}
    >
      <ResourceContent result={query.data} big={props.big} />
      <QueryMeta query={query} />
    </Card>
  );
}
