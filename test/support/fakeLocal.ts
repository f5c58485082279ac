import type { CallToolResult, Client, LoggingLevel } from '@modelcontextprotocol/client';
import { hashKey, type QueryKey } from '@tanstack/query-core';
import { McpQueryError } from '../../src/core/errors';
import type { Desire } from '../../src/core/interest';
import type { NotifiedList } from '../../src/core/lists';
import type { CallToolVariables, LocalUpstreamControl, McpAction } from '../../src/core/upstream';
import { type Deferred, deferred } from './deferred';

/**
 * A tab's own connection, for tab sharing: records what it is asked (reads, calls, interest,
 * start and stop) and lets the test answer by hand. A read or call whose signal aborts fails
 * with the signal's reason, as the SDK's requests do.
 */
export class FakeLocal implements LocalUpstreamControl {
  /** Stands for the SDK client of this tab's connection. */
  readonly sdk: Client;
  readonly reads: Array<{ key: QueryKey; signal: AbortSignal; answer: Deferred<unknown> }> = [];
  readonly calls: Array<{ variables: CallToolVariables; answer: Deferred<CallToolResult> }> = [];
  readonly desires: Desire[] = [];
  readonly covered = new Set<string>();
  readonly requests: Array<{
    method: McpAction;
    params: Record<string, unknown>;
    answer: Deferred<unknown>;
  }> = [];
  readonly logLevels: Array<LoggingLevel | undefined> = [];
  started = 0;
  stopped = 0;
  disposed = 0;
  #running = false;

  constructor(label: string) {
    this.sdk = { label } as unknown as Client;
  }

  query(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    const answer = deferred<unknown>();
    signal.addEventListener('abort', () => answer.reject(signal.reason), { once: true });
    this.reads.push({ key, signal, answer });
    return answer.promise;
  }

  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    const answer = deferred<CallToolResult>();
    const { signal } = variables;
    signal?.addEventListener('abort', () => answer.reject(signal.reason), { once: true });
    this.calls.push({ variables, answer });
    return answer.promise;
  }

  request(
    method: McpAction,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const answer = deferred<unknown>();
    signal?.addEventListener('abort', () => answer.reject(signal.reason), { once: true });
    this.requests.push({ method, params, answer });
    return answer.promise;
  }

  setLogLevel(level: LoggingLevel | undefined): void {
    this.logLevels.push(level);
  }

  /** Answer read `index` with `data`. */
  answer(index: number, data: unknown): void {
    const read = this.reads[index];
    if (!read) throw new Error(`no read #${index}`);
    read.answer.resolve(data);
  }

  /** Answer the latest read of `key` with `data`. */
  answerKey(key: QueryKey, data: unknown): void {
    const read = this.reads.findLast((r) => hashKey(r.key) === hashKey(key));
    if (!read) throw new Error(`no read of ${JSON.stringify(key)}`);
    read.answer.resolve(data);
  }

  interest(desire: Desire): void {
    this.desires.push(desire);
  }

  isCovered(uri: string): boolean {
    return this.covered.has(uri);
  }

  isListCovered(_list: NotifiedList): boolean {
    return false;
  }

  async client(): Promise<Client> {
    if (this.#running) return this.sdk;
    throw new McpQueryError('NOT_CONNECTED', 'the fake connection is not started');
  }

  readyClient(): Client | undefined {
    return this.#running ? this.sdk : undefined;
  }

  start(): void {
    this.started += 1;
    this.#running = true;
  }

  async stop(): Promise<void> {
    this.stopped += 1;
    this.#running = false;
  }

  async dispose(): Promise<void> {
    this.disposed += 1;
    this.#running = false;
  }
}
