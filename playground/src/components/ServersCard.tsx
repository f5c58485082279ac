import { type FormEvent, useState } from 'react';
import { PRESETS } from '../serverList';
import { type McpServer, type McpServerInput, useMcpServers } from '../servers';
import { Card } from './Card';

/**
 * The list: add (a form, or a preset), each server's status, era, error and sign-in, and
 * remove. `add` answers at once; a refusal is shown here, never thrown.
 */
export function ServersCard() {
  const { servers, add } = useMcpServers();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [answer, setAnswer] = useState<{ ok: boolean; text: string }>();
  const adding = (server: McpServerInput) => {
    const result = add(server);
    setAnswer(
      result.ok
        ? { ok: true, text: `added "${result.server.name}" as ${result.server.id}` }
        : { ok: false, text: `${result.problem}: ${result.message}` },
    );
    return result.ok;
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (adding({ name, url })) {
      setName('');
      setUrl('');
    }
  };
  return (
    <Card
      title="Servers"
      testId="servers-card"
      className="span-2"
      subtitle={
        <>
          <code>useMcpServers()</code>: kept in localStorage, shared with your other tabs
        </>
      }
    >
      <div className="row" data-testid="server-presets">
        {PRESETS.map((preset) => (
          <button
            key={preset.key}
            type="button"
            data-testid={`preset-${preset.key}`}
            onClick={() => adding(preset.server)}
          >
            + {preset.label}
          </button>
        ))}
      </div>
      <form className="row" onSubmit={submit} data-testid="server-form">
        <input
          aria-label="Name"
          placeholder="Name"
          value={name}
          data-testid="server-name"
          onChange={(event) => setName(event.target.value)}
        />
        <input
          aria-label="URL"
          placeholder="https://example.com/mcp"
          value={url}
          data-testid="server-url"
          onChange={(event) => setUrl(event.target.value)}
        />
        <button type="submit" className="primary" data-testid="server-add">
          Add
        </button>
      </form>
      {answer && (
        <p
          className={answer.ok ? 'muted small' : 'error'}
          data-testid="server-answer"
          data-ok={String(answer.ok)}
          role={answer.ok ? undefined : 'alert'}
        >
          {answer.text}
        </p>
      )}
      {servers.length === 0 ? (
        <p className="muted">No server yet: add one above.</p>
      ) : (
        <ul className="server-list" data-testid="server-list">
          {servers.map((server) => (
            <ServerRow key={server.id} server={server} />
          ))}
        </ul>
      )}
    </Card>
  );
}

function ServerRow({ server }: { server: McpServer }) {
  const { remove } = useMcpServers();
  const wantsSignIn = server.status === 'unauthorized' && server.signIn === 'signed-out';
  return (
    <li
      className="server-row"
      data-testid={`server-${server.id}`}
      data-status={server.status}
      data-sign-in={server.signIn}
    >
      <div className="server-head">
        <span className="dot" aria-hidden />
        <strong data-testid="server-row-name">{server.name}</strong>
        <span data-testid="server-row-status">{server.status}</span>
        <span className="muted">
          {server.era ?? 'era ?'} · <code>{server.id}</code>
        </span>
      </div>
      <code className="muted small">{server.url}</code>
      {server.signIn !== 'none' && (
        <span className="pill" data-testid="server-row-sign-in">
          {server.signIn}
        </span>
      )}
      {server.error && server.status !== 'ready' && (
        <span className="error-text small" data-testid="server-row-error">
          {server.error.message}
        </span>
      )}
      <div className="row">
        {wantsSignIn && (
          <button
            type="button"
            className="primary"
            data-testid="server-row-authorize"
            onClick={server.authorize}
          >
            Sign in…
          </button>
        )}
        {server.signIn === 'signed-in' && (
          <button type="button" data-testid="server-row-sign-out" onClick={server.signOut}>
            Sign out
          </button>
        )}
        <button type="button" data-testid="server-row-reconnect" onClick={server.reconnect}>
          Reconnect
        </button>
        <button
          type="button"
          data-testid="server-row-remove"
          onClick={() => void remove(server.id)}
        >
          Remove
        </button>
      </div>
    </li>
  );
}
