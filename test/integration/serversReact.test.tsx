/** @vitest-environment jsdom */
/**
 * `mcp-react-query/servers` in React (issue 19), on real servers: the provider and
 * `useMcpServers()`, the main entry's hooks with `{ scope: id }`, and the hooks across servers
 * (tools and prompts under qualified names, resources grouped, calls routed, questions saying
 * who asks). Re-renders never reconnect anything: handshakes are counted on the wire.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { type ReactNode, StrictMode, useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, useMcp, useResource, useToolList } from '../../src';
import { memoryStorage } from '../../src/auth';
import {
  createServerSignIn,
  type McpServerInput,
  McpServersProvider,
  type McpServersProviderProps,
  useCallServerTool,
  useMcpServers,
  useServerElicitations,
  useServerPrompts,
  useServerResources,
  useServerTools,
} from '../../src/servers';
import { startTamperProxy } from '../servers';
import {
  atEnd,
  authServer,
  closeAll,
  DOC,
  FAST,
  openManager,
  serverOf,
  UNREACHABLE,
  wire,
} from '../support/manager';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await closeAll();
});

const textOf = (result: ReadResourceResult | undefined) => {
  const content = result?.contents[0];
  return content && 'text' in content ? content.text : '…';
};

function app(children: ReactNode, props: Partial<McpServersProviderProps> = {}) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  atEnd(() => queryClient.clear());
  return (
    <QueryClientProvider client={queryClient}>
      <McpServersProvider
        storage={memoryStorage()}
        channel={null}
        reconnect={FAST}
        lingerMs={10}
        {...props}
      >
        {children}
      </McpServersProvider>
    </QueryClientProvider>
  );
}

/** A host's server list: each server's status, and its doc read with `{ scope: id }`. */
function ServerList() {
  const { servers, remove } = useMcpServers();
  return (
    <ul>
      {servers.map((server) => (
        <li key={server.id} data-testid={`server-${server.id}`} data-status={server.status}>
          {server.name}: {server.status}
          {server.status === 'ready' && <Doc scope={server.id} />}
          <button type="button" onClick={() => void remove(server.id)}>
            remove {server.id}
          </button>
        </li>
      ))}
    </ul>
  );
}

function Doc({ scope }: { scope: string }) {
  const doc = useResource(DOC, { scope });
  const { era } = useMcp(scope);
  return (
    <span data-testid={`doc-${scope}`} data-era={era}>
      {textOf(doc.data)}
    </span>
  );
}

/** An "add server" form, as a host has it: the answer of `add` shown, never thrown. */
function AddForm({ url }: { url: string }) {
  const { add } = useMcpServers();
  const [message, setMessage] = useState('');
  const submit = (name: string, target: string) => {
    const result = add({ name, url: target });
    setMessage(result.ok ? `added ${result.server.id}` : `${result.problem}: ${result.message}`);
  };
  return (
    <div>
      <button type="button" onClick={() => submit('Docs', url)}>
        add docs
      </button>
      <button type="button" onClick={() => submit('Broken', 'not a url')}>
        add broken
      </button>
      <button type="button" onClick={() => submit('Again', url)}>
        add again
      </button>
      <output data-testid="message">{message}</output>
    </div>
  );
}

/** A button that adds these servers (as a host's "add" form would, from a click). */
function AddButton({ label, servers }: { label: string; servers: McpServerInput[] }) {
  const { add } = useMcpServers();
  return (
    <button
      type="button"
      onClick={() => {
        for (const server of servers) add(server);
      }}
    >
      {label}
    </button>
  );
}

/** Re-renders its subtree on `bump()`: a host whose own state changes all the time. */
let bump: () => void = () => {};
function Rerendering({ children }: { children: ReactNode }) {
  const [count, setCount] = useState(0);
  bump = () => setCount((n) => n + 1);
  return <div data-count={count}>{children}</div>;
}

/** The nearest McpProvider's doc, and a server's tool list by id. */
function NearestAndScoped({ scope }: { scope: string }) {
  const nearest = useResource(DOC);
  const tools = useToolList({ scope });
  return (
    <>
      <span data-testid="nearest">{textOf(nearest.data)}</span>
      <span data-testid="tools">{tools.data?.map((tool) => tool.name).join(',')}</span>
    </>
  );
}

/** Its children once the servers list has something (a scope must exist to be read). */
function WithServers({ children }: { children: ReactNode }) {
  return useMcpServers().servers.length > 0 ? children : null;
}

/** The app's own doc, read through its `<McpProvider scope>`. */
function AppDoc({ scope }: { scope: string }) {
  const doc = useResource(DOC, { scope });
  return <span data-testid={`app-${scope}`}>{textOf(doc.data)}</span>;
}

function Nearest() {
  useResource(DOC);
  return null;
}

/** Every server's tools by qualified name, and a call across servers. */
let callTool: ReturnType<typeof useCallServerTool> | undefined;
function ToolsView() {
  const { tools, servers } = useServerTools();
  callTool = useCallServerTool();
  return (
    <>
      <span data-testid="tools">
        {tools.map((tool) => `${tool.qualifiedName}@${tool.serverId}`).join(' ')}
      </span>
      <span data-testid="lists">{servers.map((s) => `${s.serverId}:${s.status}`).join(' ')}</span>
    </>
  );
}

function ListsView() {
  const { tools, servers } = useServerTools();
  const resources = useServerResources();
  const prompts = useServerPrompts();
  return (
    <>
      <span data-testid="tools">{tools.map((tool) => tool.qualifiedName).join(' ')}</span>
      <span data-testid="lists">
        {servers.map((s) => `${s.serverId}:${s.status}:${s.error ? 'failed' : 'ok'}`).join(' ')}
      </span>
      <span data-testid="resources">
        {resources.servers
          .map((s) => `${s.serverId}=${s.items.map((r) => r.uri).join('+')}`)
          .join(' ')}
      </span>
      <span data-testid="prompts">
        {prompts.servers.map((s) => `${s.serverId}:${s.status}`).join(' ')}
      </span>
    </>
  );
}

/** A sign-in button for each server that wants one. */
function SignInButtons() {
  const { servers } = useMcpServers();
  return (
    <>
      {servers.map((server) =>
        server.status === 'unauthorized' && server.signIn === 'signed-out' ? (
          <button key={server.id} type="button" onClick={server.authorize}>
            sign in to {server.name}
          </button>
        ) : null,
      )}
    </>
  );
}

function Questions() {
  const questions = useServerElicitations();
  callTool = useCallServerTool();
  useServerTools();
  return (
    <ul>
      {questions.map((question) => (
        <li key={`${question.serverId}-${question.id}`}>
          {question.serverName}: {question.params.message}
          <button type="button" onClick={() => question.accept({ ok: true })}>
            yes {question.serverId}
          </button>
        </li>
      ))}
    </ul>
  );
}

const statusOf = (id: string) => screen.queryByTestId(`server-${id}`)?.dataset.status;
const shown = (testId: string) => screen.queryByTestId(testId)?.textContent;

describe('McpServersProvider and useMcpServers', () => {
  it('add answers in the UI (bad URL, duplicate) and never throws; the server connects', async () => {
    const docs = await serverOf('modern', 'docs');
    render(
      app(
        <>
          <AddForm url={docs.url} />
          <ServerList />
        </>,
      ),
    );
    fireEvent.click(screen.getByText('add broken'));
    expect(shown('message')).toMatch(/^invalid-url: /);
    fireEvent.click(screen.getByText('add docs'));
    expect(shown('message')).toBe('added docs');
    fireEvent.click(screen.getByText('add again'));
    expect(shown('message')).toMatch(/^duplicate-url: .*"Docs"/);
    await eventually(() => expect(shown('doc-docs')).toBe('docs doc'));
    expect(screen.getByTestId('doc-docs').dataset.era).toBe('modern');
  });

  it('the same URI on two servers is never mixed, and re-renders (StrictMode too) never reconnect', async () => {
    const [a, b] = await Promise.all([serverOf('modern', 'A'), serverOf('legacy-v2', 'B')]);
    const counted = wire();
    const host = (
      <Rerendering>
        <AddButton
          label="add"
          servers={[
            { id: 'a', name: 'A', url: a.url },
            { id: 'b', name: 'B', url: b.url },
          ]}
        />
        <ServerList />
      </Rerendering>
    );
    const view = render(<StrictMode>{app(host, { fetch: counted.fetch })}</StrictMode>);
    fireEvent.click(screen.getByText('add'));
    await eventually(() => {
      expect(shown('doc-a')).toBe('A doc');
      expect(shown('doc-b')).toBe('B doc');
    });
    const handshakes = [counted.handshakes(a.url), counted.handshakes(b.url)];
    for (let i = 0; i < 20; i += 1) act(() => bump());
    // A parent re-render hands the provider new option objects: they are not read again.
    view.rerender(
      <StrictMode>{app(host, { fetch: counted.fetch, reconnect: { ...FAST } })}</StrictMode>,
    );
    b.setText(DOC, 'B doc v2');
    await eventually(() => expect(shown('doc-b')).toBe('B doc v2'));
    expect(shown('doc-a')).toBe('A doc');
    expect([counted.handshakes(a.url), counted.handshakes(b.url)]).toEqual(handshakes);
    expect(a.openStreams()).toBe(1);
    expect(b.liveSessions()).toBe(1);
  });

  it('removing a server whose content is on screen takes it off, with no error and nothing left', async () => {
    const [a, b] = await Promise.all([serverOf('modern', 'A'), serverOf('legacy-v2', 'B')]);
    const errors: unknown[] = [];
    const onError = (event: ErrorEvent) => errors.push(event.error);
    window.addEventListener('error', onError);
    atEnd(() => window.removeEventListener('error', onError));
    render(
      app(
        <>
          <AddButton
            label="add both"
            servers={[
              { id: 'a', name: 'A', url: a.url },
              { id: 'b', name: 'B', url: b.url },
            ]}
          />
          <ServerList />
        </>,
      ),
    );
    fireEvent.click(screen.getByText('add both'));
    await eventually(() => expect(shown('doc-b')).toBe('B doc'));
    fireEvent.click(screen.getByText('remove b'));
    expect(screen.queryByTestId('server-b')).toBeNull();
    await eventually(() => expect(b.liveSessions()).toBe(0));
    expect(statusOf('a')).toBe('ready');
    expect(errors).toEqual([]);
  });

  it('inside an McpProvider, its hooks keep the nearest provider and servers go by id', async () => {
    const [outer, added] = await Promise.all([
      serverOf('modern', 'outer'),
      serverOf('modern', 'added'),
    ]);
    const queryClient = new QueryClient();
    atEnd(() => queryClient.clear());
    render(
      <QueryClientProvider client={queryClient}>
        <McpProvider url={outer.url} reconnect={FAST}>
          <McpServersProvider storage={memoryStorage()} channel={null} reconnect={FAST}>
            <AddButton label="add" servers={[{ id: 'added', name: 'Added', url: added.url }]} />
            <WithServers>
              <NearestAndScoped scope="added" />
            </WithServers>
          </McpServersProvider>
        </McpProvider>
      </QueryClientProvider>,
    );
    fireEvent.click(screen.getByText('add'));
    await eventually(() => {
      expect(shown('nearest')).toBe('outer doc');
      expect(shown('tools')).toBe('whoami,added_only');
    });
  });

  it('under the app’s own <McpProvider scope>, a user’s server never answers for that scope', async () => {
    const [own, added, stored] = await Promise.all([
      serverOf('modern', 'own'),
      serverOf('modern', 'added'),
      serverOf('modern', 'stored'),
    ]);
    // Stored before the app had a scope "notes" of its own.
    const storage = memoryStorage();
    const before = openManager({ storage });
    before.manager.add({ id: 'notes', name: 'Notes', url: stored.url });
    await before.close();
    const queryClient = new QueryClient();
    atEnd(() => queryClient.clear());
    render(
      <QueryClientProvider client={queryClient}>
        <McpProvider url={own.url} scope="docs" reconnect={FAST}>
          <McpProvider url={own.url} scope="notes" reconnect={FAST}>
            <McpServersProvider storage={storage} channel={null} reconnect={FAST}>
              <AddForm url={added.url} />
              <AppDoc scope="docs" />
              <AppDoc scope="notes" />
              <ServerList />
            </McpServersProvider>
          </McpProvider>
        </McpProvider>
      </QueryClientProvider>,
    );
    fireEvent.click(screen.getByText('add docs'));
    expect(shown('message')).toBe('added docs-2');
    await eventually(() => {
      expect(shown('doc-docs-2')).toBe('added doc');
      expect(statusOf('notes')).toBe('ready');
    });
    expect(shown('app-docs')).toBe('own doc');
    expect(shown('app-notes')).toBe('own doc');
  });

  it('a hook without scope under McpServersProvider alone says what is missing', () => {
    const quiet = (event: ErrorEvent) => event.preventDefault();
    window.addEventListener('error', quiet);
    atEnd(() => window.removeEventListener('error', quiet));
    expect(() => render(app(<Nearest />))).toThrow(
      'useResource must be used inside <McpProvider> (or given a scope)',
    );
  });
});

describe('hooks across servers', () => {
  it('tools of every server under qualified names, a call routed by name; colliding names kept apart', async () => {
    const [docs, docs2, files] = await Promise.all([
      serverOf('modern', 'docs', { tools: [{ name: 'search' }, { name: 'b__c' }] }),
      serverOf('legacy-v2', 'docs2', { tools: [{ name: 'search' }] }),
      serverOf('modern', 'files', { tools: [{ name: 'c' }, { name: 'search', fail: true }] }),
    ]);
    render(
      app(
        <>
          <AddButton
            label="add"
            servers={[
              { id: 'docs', name: 'Docs', url: docs.url },
              // Sanitises to the same prefix as "Docs": it becomes Docs_2.
              { id: 'docs2', name: 'Docs!', url: docs2.url },
              // Its prefix holds no separator ("Docs_b"): "Docs" + "b__c" cannot meet it.
              { id: 'files', name: 'Docs__b', url: files.url },
            ]}
          />
          <ToolsView />
        </>,
      ),
    );
    fireEvent.click(screen.getByText('add'));
    await eventually(() =>
      expect(shown('tools')).toBe(
        'Docs__search@docs Docs__b__c@docs Docs_2__search@docs2 Docs_b__c@files Docs_b__search@files',
      ),
    );
    expect(shown('lists')).toBe('docs:success docs2:success files:success');
    const calls = () => [docs, docs2, files].map((server) => server.counters().toolCalls);
    const before = calls();
    let result: Awaited<ReturnType<NonNullable<typeof callTool>['mutateAsync']>> | undefined;
    await act(async () => {
      result = await callTool?.mutateAsync({ name: 'Docs_2__search' });
    });
    expect(result?.isError).toBeFalsy();
    await act(async () => {
      result = await callTool?.mutateAsync({ name: 'Docs_b__search' });
    });
    expect(result).toMatchObject({ isError: true });
    await act(async () => {
      await callTool?.mutateAsync({ name: 'Docs_b__c' });
    });
    expect(calls()).toEqual([before[0], (before[1] ?? 0) + 1, (before[2] ?? 0) + 2]);
    await act(async () => {
      await expect(callTool?.mutateAsync({ name: 'Nobody__search' })).rejects.toMatchObject({
        code: 'UNKNOWN_SERVER',
      });
    });
  });

  it('a server that is down or slow never delays the others; each shows its own error', async () => {
    const [fast, behind] = await Promise.all([
      serverOf('modern', 'fast', { capabilities: { prompts: false } }),
      serverOf('legacy-v2', 'slow'),
    ]);
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = await startTamperProxy(behind.url, {
      hold: (exchange) =>
        exchange.method === 'tools/list' || exchange.method === 'resources/list'
          ? released
          : undefined,
    });
    atEnd(() => slow.close());
    atEnd(release);
    render(
      app(
        <>
          <AddButton
            label="add"
            servers={[
              { id: 'down', name: 'Down', url: UNREACHABLE },
              { id: 'slow', name: 'Slow', url: slow.url },
              { id: 'fast', name: 'Fast', url: fast.url },
            ]}
          />
          <ListsView />
        </>,
        { requestTimeoutMs: 3000 },
      ),
    );
    fireEvent.click(screen.getByText('add'));
    // The fast server's lists show while the slow one's answers are held (it cannot have
    // them) and the down one has not even connected; a server without prompts has an empty
    // list, not an error.
    await eventually(() => {
      expect(shown('tools')).toBe('Fast__whoami Fast__fast_only');
      expect(shown('resources')).toBe(`down= slow= fast=${DOC}`);
      expect(shown('prompts')).toMatch(/^down:(pending|error) slow:success fast:success$/);
    });
    expect(shown('lists')).toMatch(/^down:\w+:\w+ slow:pending:\w+ fast:success:ok$/);
    // Each of the others says, on its own, why it has nothing: bounded by its requestTimeoutMs.
    await eventually(
      () => expect(shown('lists')).toMatch(/^down:\w+:failed slow:pending:failed fast:success:ok$/),
      { timeout: 10_000 },
    );
    release();
    await eventually(
      () =>
        expect(shown('tools')).toBe('Slow__whoami Slow__slow_only Fast__whoami Fast__fast_only'),
      { timeout: 10_000 },
    );
    expect(shown('lists')).toMatch(/^down:\w+:failed slow:success:ok fast:success:ok$/);
  }, 30_000);

  it('a server that needs sign-in shows authorize(); once signed in, its tools join the list', async () => {
    const auth = await authServer();
    const [open, guarded] = await Promise.all([
      serverOf('legacy-v2', 'open'),
      serverOf('modern', 'guarded', { authServer: auth }),
    ]);
    const storage = memoryStorage();
    const callbacks: URL[] = [];
    const signIn = createServerSignIn({
      redirectUrl: 'http://127.0.0.1:9/callback',
      storage,
      navigate: async (url) => {
        const response = await fetch(url, { redirect: 'manual' });
        callbacks.push(new URL(response.headers.get('location') ?? ''));
      },
    });
    render(
      app(
        <>
          <AddButton
            label="add"
            servers={[
              { id: 'open', name: 'Open', url: open.url },
              { id: 'guarded', name: 'Guarded', url: guarded.url },
            ]}
          />
          <SignInButtons />
          <ToolsView />
        </>,
        { signIn, storage },
      ),
    );
    fireEvent.click(screen.getByText('add'));
    await eventually(() => screen.getByText('sign in to Guarded'));
    expect(shown('tools')).toBe('Open__whoami@open Open__open_only@open');
    fireEvent.click(screen.getByText('sign in to Guarded'));
    await eventually(() => expect(callbacks).toHaveLength(1));
    await signIn.complete(callbacks[0]);
    await eventually(() =>
      expect(shown('tools')).toBe(
        'Open__whoami@open Open__open_only@open Guarded__whoami@guarded Guarded__guarded_only@guarded',
      ),
    );
    expect(shown('lists')).toBe('open:success guarded:success');
  });

  it('questions of every server say which server asks; answering one leaves the other', async () => {
    const ask = (message: string) => ({
      name: 'ask',
      elicit: {
        message,
        requestedSchema: { type: 'object' as const, properties: { ok: { type: 'boolean' } } },
      },
    });
    const [first, second] = await Promise.all([
      serverOf('modern', 'first', { tools: [ask('First asks')] }),
      serverOf('legacy-v2', 'second', { tools: [ask('Second asks')] }),
    ]);
    render(
      app(
        <>
          <AddButton
            label="add"
            servers={[
              { id: 'first', name: 'First', url: first.url },
              { id: 'second', name: 'Second', url: second.url },
            ]}
          />
          <Questions />
        </>,
        { serverRequests: { elicitation: true } },
      ),
    );
    fireEvent.click(screen.getByText('add'));
    const calls = [
      callTool?.mutateAsync({ name: 'First__ask' }),
      callTool?.mutateAsync({ name: 'Second__ask' }),
    ];
    await eventually(() => {
      screen.getByText('First: First asks');
      screen.getByText('Second: Second asks');
    });
    fireEvent.click(screen.getByText('yes second'));
    const answered = await calls[1];
    expect(answered?.content[0]).toMatchObject({ text: 'answered accept {"ok":true}' });
    expect(screen.queryByText('Second: Second asks')).toBeNull();
    screen.getByText('First: First asks');
    fireEvent.click(screen.getByText('yes first'));
    await calls[0];
  });
});
