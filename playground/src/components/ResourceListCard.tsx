import { useResourceList } from '../mcp';
import { Card } from './Card';
import { QueryMeta } from './QueryMeta';

/** `useResourceList()`: every page, refetched once per `list_changed`. */
export function ResourceListCard() {
  const list = useResourceList();
  return (
    <Card
      title="Resource list"
      subtitle={`${list.data?.length ?? 0} resources · useResourceList()`}
      testId="resource-list"
      className="span-2"
      data={{ 'data-status': list.status }}
    >
      <table className="table">
        <thead>
          <tr>
            <th>URI</th>
            <th>Title</th>
            <th>Type</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.map((resource) => (
            <tr key={resource.uri} data-testid="resource-row" data-uri={resource.uri}>
              <td>
                <code>{resource.uri}</code>
              </td>
              <td>{resource.title ?? resource.name}</td>
              <td className="muted">{resource.mimeType ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <QueryMeta query={list} />
    </Card>
  );
}
