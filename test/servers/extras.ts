/**
 * The parts of the test servers that issue 21 exercises, SDK-agnostic like `protocol.ts`: what
 * `prompts/get` and `completion/complete` answer, tool calls that wait until released or
 * cancelled (and remember which were cancelled), and tasks (2025-11-25, experimental).
 *
 * Tasks live on the store, not on a 2025 session: the spec binds a task to the authorization
 * context (the signed-in user), so a task started in one session is found from the next (a
 * reload, another tab taking over the connection). Unprotected servers have one context.
 */
import { HandlerFailure, type ToolCallAnswer } from './protocol';
import type { StoredPrompt, StoredTemplate } from './resourceStore';

export type LogLevel =
  | 'debug'
  | 'info'
  | 'notice'
  | 'warning'
  | 'error'
  | 'critical'
  | 'alert'
  | 'emergency';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

interface TaskRecord {
  state: TaskState;
  /** Who may see it (the signed-in user; undefined on an unprotected server). */
  owner: string | undefined;
  tool: string;
  answer: ToolCallAnswer | undefined;
  error: { code: number; message: string } | undefined;
  abort: AbortController;
  /** Settles when the task reaches a terminal status. */
  done: Promise<void>;
  finish: () => void;
  /** Tells the session that created it about status changes, while it lives. */
  notify: ((state: TaskState) => void) | undefined;
}

const TERMINAL = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);
const TASK_POLL_INTERVAL_MS = 50;

/** A prompt's message: `text` with `{arg}` filled in, else a line naming the prompt and its arguments. */
export function promptMessages(
  prompt: StoredPrompt,
  args: Record<string, string> | undefined,
  revision: number,
): { description?: string; messages: { role: 'user'; content: { type: 'text'; text: string } }[] } {
  for (const argument of prompt.arguments ?? []) {
    if (argument.required && args?.[argument.name] === undefined) {
      throw new HandlerFailure({
        kind: 'invalid-params',
        message: `Missing required argument ${argument.name} for prompt ${prompt.name}`,
      });
    }
  }
  const text =
    prompt.text?.replace(/\{(\w+)\}/g, (_, name: string) => args?.[name] ?? '') ??
    `prompt ${prompt.name} rev ${revision} with ${JSON.stringify(args ?? {})}`;
  return {
    ...(prompt.description !== undefined && { description: prompt.description }),
    messages: [{ role: 'user', content: { type: 'text', text } }],
  };
}

/** What a completion request names: a prompt's argument or a template's variable. */
export type CompletionRef =
  | { type: 'ref/prompt'; name: string }
  | { type: 'ref/resource'; uri: string };

export class ServerExtras {
  /** Bumped by a test to make `prompts/get` answer something new (a prompt edited on the server). */
  promptRevision = 1;
  /** Every `completion/complete` served, and those the client cancelled before the answer. */
  completeRequests = 0;
  cancelledCompletions = 0;
  /** Tool calls that saw the client cancel them (names, in order). */
  readonly cancelledCalls: string[] = [];
  /** Send `notifications/tasks/status` to the session that created a task (default: poll only). */
  taskNotifications = false;
  /** The `pollInterval` new tasks suggest (ms). */
  taskPollInterval = TASK_POLL_INTERVAL_MS;
  #completeHook: (() => Promise<void> | void) | undefined;
  readonly #held = new Set<() => void>();
  readonly #tasks = new Map<string, TaskRecord>();
  #nextTask = 0;

  /** Runs before a completion is answered: may await (to hold it open). */
  onComplete(hook: (() => Promise<void> | void) | undefined): void {
    this.#completeHook = hook;
  }

  /** Tool calls (and tasks) of `hold` tools waiting now. */
  held(): number {
    return this.#held.size;
  }

  /** Let every held tool call (and task) answer. Returns how many. */
  release(): number {
    const all = [...this.#held];
    this.#held.clear();
    for (const release of all) release();
    return all.length;
  }

  /** Waits `ms`, or records the cancellation and rejects when `signal` aborts first. */
  pause(tool: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        this.cancelledCalls.push(tool);
        reject(new Error(`${tool} cancelled by the client`));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Waits until released, or records the cancellation and rejects when `signal` aborts. */
  hold(tool: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const release = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#held.delete(release);
        this.cancelledCalls.push(tool);
        reject(new Error(`${tool} cancelled by the client`));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      this.#held.add(release);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  async complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    sources: { prompts: StoredPrompt[]; templates: StoredTemplate[] },
    signal: AbortSignal,
  ): Promise<{ completion: { values: string[]; total: number; hasMore: boolean } }> {
    this.completeRequests += 1;
    await this.#completeHook?.();
    if (signal.aborted) {
      this.cancelledCompletions += 1;
      throw new HandlerFailure({ kind: 'error', code: -32800, message: 'Request cancelled' });
    }
    const source =
      ref.type === 'ref/prompt'
        ? sources.prompts.find((prompt) => prompt.name === ref.name)
        : sources.templates.find((template) => template.uriTemplate === ref.uri);
    if (!source) {
      throw new HandlerFailure({
        kind: 'invalid-params',
        message: `No ${ref.type === 'ref/prompt' ? 'prompt' : 'template'} to complete`,
      });
    }
    const all = source.completions?.[argument.name] ?? [];
    const prefix = argument.value.toLowerCase();
    const values = all.filter((value) => value.toLowerCase().startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  }

  // ── tasks ────────────────────────────────────────────────────────────────

  /**
   * A task for a tool call: `run` goes on in the background (its signal aborts on
   * `tasks/cancel`); the answer, or the error, is kept for `tasks/result`.
   */
  createTask(options: {
    tool: string;
    owner: string | undefined;
    ttl: number | undefined;
    run: (signal: AbortSignal) => Promise<ToolCallAnswer>;
    notify?: (state: TaskState) => void;
  }): TaskState {
    this.#nextTask += 1;
    const now = new Date().toISOString();
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const record: TaskRecord = {
      state: {
        taskId: `task-${this.#nextTask}-${Math.random().toString(36).slice(2, 10)}`,
        status: 'working',
        createdAt: now,
        lastUpdatedAt: now,
        ttl: options.ttl ?? 60_000,
        pollInterval: this.taskPollInterval,
      },
      owner: options.owner,
      tool: options.tool,
      answer: undefined,
      error: undefined,
      abort: new AbortController(),
      done,
      finish,
      notify: options.notify,
    };
    this.#tasks.set(record.state.taskId, record);
    options.run(record.abort.signal).then(
      (answer) => {
        record.answer = answer;
        this.#settle(record, answer.isError ? 'failed' : 'completed');
      },
      (error: unknown) => {
        if (record.abort.signal.aborted) return;
        const { code = -32603, message = String(error) } = (error ?? {}) as {
          code?: number;
          message?: string;
        };
        record.error = { code, message };
        this.#settle(record, 'failed', message);
      },
    );
    return { ...record.state };
  }

  getTask(taskId: string, owner: string | undefined): TaskState {
    return { ...this.#find(taskId, owner).state };
  }

  /** Blocks until the task is terminal, then answers what the call would have (spec). */
  async taskResult(
    taskId: string,
    owner: string | undefined,
    signal: AbortSignal,
  ): Promise<ToolCallAnswer & { _meta: Record<string, unknown> }> {
    const record = this.#find(taskId, owner);
    await Promise.race([
      record.done,
      new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }),
      ),
    ]);
    const meta = { 'io.modelcontextprotocol/related-task': { taskId } };
    if (record.answer) return { ...record.answer, _meta: meta };
    if (record.error) throw new HandlerFailure({ kind: 'error', ...record.error });
    return { content: [{ type: 'text', text: 'cancelled' }], isError: true, _meta: meta };
  }

  listTasks(owner: string | undefined): { tasks: TaskState[] } {
    const tasks = [...this.#tasks.values()]
      .filter((record) => record.owner === owner)
      .map((record) => ({ ...record.state }));
    return { tasks };
  }

  cancelTask(taskId: string, owner: string | undefined): TaskState {
    const record = this.#find(taskId, owner);
    if (TERMINAL.has(record.state.status)) {
      throw new HandlerFailure({
        kind: 'invalid-params',
        message: `Cannot cancel task: already in terminal status '${record.state.status}'`,
      });
    }
    record.abort.abort();
    this.#settle(record, 'cancelled', 'The task was cancelled by request.');
    return { ...record.state };
  }

  /** Tasks started on this store, newest last (for assertions). */
  tasks(): (TaskState & { tool: string })[] {
    return [...this.#tasks.values()].map((record) => ({ ...record.state, tool: record.tool }));
  }

  /** Every task the server forgets (a purge, an expired TTL). */
  forgetTasks(): void {
    this.#tasks.clear();
  }

  #find(taskId: string, owner: string | undefined): TaskRecord {
    const record = this.#tasks.get(taskId);
    if (!record || record.owner !== owner) {
      throw new HandlerFailure({
        kind: 'invalid-params',
        message: 'Failed to retrieve task: Task not found',
      });
    }
    return record;
  }

  #settle(record: TaskRecord, status: TaskStatus, statusMessage?: string): void {
    if (TERMINAL.has(record.state.status)) return;
    record.state = {
      ...record.state,
      status,
      ...(statusMessage !== undefined && { statusMessage }),
      lastUpdatedAt: new Date().toISOString(),
    };
    record.finish();
    if (this.taskNotifications) record.notify?.({ ...record.state });
  }
}
