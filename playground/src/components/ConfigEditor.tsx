import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { URIS } from '../../shared/demo';
import { demoRequest } from '../api';
import { useResource } from '../mcp';
import { textOf } from '../resourceText';
import { Card } from './Card';
import { QueryMeta } from './QueryMeta';

/**
 * Edits `config://app` on the server. The textarea follows the live value until you type; the
 * saved text then comes back like any other change: notification, read, every panel at once.
 */
export function ConfigEditor() {
  const query = useResource(URIS.config);
  const serverText = textOf(query.data);
  const [draft, setDraft] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: (text: string) => demoRequest('POST', '/demo/config', { text }),
  });
  // The draft ends once the server shows it: no flash of the old text between save and read.
  if (draft !== undefined && draft === serverText && !save.isPending) setDraft(undefined);
  const dirty = draft !== undefined && draft !== serverText;
  return (
    <Card
      title="Config editor"
      subtitle={<code>{URIS.config}</code>}
      testId="panel-config-editor"
      className="span-2"
      data={{ 'data-status': query.status, 'data-fetching': String(query.isFetching) }}
    >
      <textarea
        className="editor"
        data-testid="config-input"
        spellCheck={false}
        value={draft ?? serverText ?? ''}
        onChange={(event) => setDraft(event.target.value)}
        aria-label="config://app JSON"
      />
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="config-save"
          disabled={!dirty || save.isPending}
          onClick={() => draft !== undefined && save.mutate(draft)}
        >
          {save.isPending ? 'Saving…' : 'Save to server'}
        </button>
        <button type="button" disabled={draft === undefined} onClick={() => setDraft(undefined)}>
          Revert
        </button>
        {dirty && <span className="muted">editing — live changes wait until you save</span>}
      </div>
      {save.error && (
        <div className="error" data-testid="config-error" role="alert">
          {save.error.message}
        </div>
      )}
      <QueryMeta query={query} />
    </Card>
  );
}
