import { useDemoAction } from '../hooks/useDemoAction';
import { useResource } from '../mcp';
import { textOf } from '../resourceText';

/** One note's content, subscribed while it is listed. */
export function NoteItem(props: { uri: string }) {
  const query = useResource(props.uri);
  const remove = useDemoAction(() => ({
    method: 'DELETE',
    path: `/demo/notes?uri=${encodeURIComponent(props.uri)}`,
  }));
  return (
    <li className="note" data-testid="note-item" data-uri={props.uri}>
      <div className="note-text" data-testid="note-text">
        {textOf(query.data) ?? (query.error ? query.error.message : '…')}
      </div>
      <div className="note-side">
        <code className="muted">{props.uri}</code>
        <button
          type="button"
          className="link"
          data-testid="note-remove"
          disabled={remove.isPending}
          onClick={() => remove.mutate()}
        >
          remove
        </button>
      </div>
    </li>
  );
}
