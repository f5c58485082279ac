/**
 * What the playground needs to host MCP Apps beside the demo: the sandbox proxy (its own port,
 * started with the dev server) and the official example servers (their own processes, started
 * the first time the page asks for them, so a run that never shows them pays nothing).
 */
import type { AppsInfo, ExampleServers } from '../shared/demo';
import { EXAMPLE_IDS, type ExampleServer, startExampleServer } from './exampleApps';
import { type SandboxServer, startSandboxServer } from './sandboxServer';

export class AppsHost {
  readonly #sandbox: Promise<SandboxServer>;
  #examples: Array<Promise<ExampleServer>> | undefined;
  #closed = false;

  constructor() {
    this.#sandbox = startSandboxServer();
    // A failure is reported by info(); nothing here may be an unhandled rejection.
    this.#sandbox.catch(() => {});
  }

  async info(): Promise<AppsInfo> {
    return { sandbox: (await this.#sandbox).url };
  }

  async examples(): Promise<ExampleServers> {
    if (this.#closed) throw new Error('the playground is shutting down');
    this.#examples ??= EXAMPLE_IDS.map((id) => startExampleServer(id));
    const answers = await Promise.all(
      this.#examples.map((started, index) =>
        started.then(
          (server) => ({ url: server.url }),
          (error: unknown) => ({
            error: `${EXAMPLE_IDS[index]} did not start: ${(error as Error).message}`,
          }),
        ),
      ),
    );
    return Object.fromEntries(EXAMPLE_IDS.map((id, i) => [id, answers[i]])) as ExampleServers;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([
      this.#sandbox.then((server) => server.close()),
      ...(this.#examples ?? []).map((started) => started.then((server) => server.stop())),
    ]);
  }
}
