import { useState } from 'react';
import { NOTE_PREFIX } from '../../shared/demo';
import { useDemoAction } from '../hooks/useDemoAction';
import { useResourceList } from '../mcp';
import { Card } from './Card';
import { NoteItem } from './NoteItem';

/** Notes come and go as resources: the list here is the live resource list, filtered. */
export function NotesCard() {
  const list = useResourceList({
    select: (resources) => resources.filter((resource) => resource.uri.startsWith(NOTE_PREFIX)),
  });
  const [text, setText] = useState('');
  const add = useDemoAction((note: string) => ({
    method: 'POST',
    path: '/demo/notes',
    body: { text: note },
  }));
  const submit = () => {
    if (text.trim() === '') return;
    add.mutate(text, { onSuccess: () => setText('') });
  };
  return (
    <Card title="Notes" subtitle={<code>{NOTE_PREFIX}*</code>} testId="notes" className="span-2">
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <input
          data-testid="note-input"
          placeholder="Write a note…"
          value={text}
          maxLength={2000}
          onChange={(event) => setText(event.target.value)}
        />
        <button type="submit" className="primary" data-testid="note-add" disabled={add.isPending}>
          Add
        </button>
      </form>
      {add.error && <div className="error">{add.error.message}</div>}
      <ul className="notes">
        {list.data?.map((resource) => (
          <NoteItem key={resource.uri} uri={resource.uri} />
        ))}
      </ul>
      {list.data?.length === 0 && <div className="muted">No notes.</div>}
    </Card>
  );
}
