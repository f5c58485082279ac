import type { PendingElicitation, ServerRequests } from '../core/serverRequests';

/** A question from one of the servers, saying which. */
export interface ServerElicitation extends PendingElicitation {
  readonly serverId: string;
  readonly serverName: string;
}

interface Source {
  readonly id: string;
  readonly name: string;
  readonly requests: ServerRequests;
}

const NONE: readonly ServerElicitation[] = [];

/**
 * Every server's pending elicitations as one list. While anyone listens,
 * it answers for every server (each one's questions wait for the user, as
 * with a mounted `useElicitations`), servers added meanwhile included; a
 * server that goes takes its questions with it.
 */
export class ElicitationsOfServers {
  readonly #listeners = new Set<() => void>();
  /** Per server while someone listens: what stops answering for it. */
  readonly #answering = new Map<string, { source: Source; stop: () => void }>();
  readonly #wrapped = new WeakMap<PendingElicitation, ServerElicitation>();
  #sources: readonly Source[] = [];
  #list: readonly ServerElicitation[] = NONE;

  /** The servers now (in the manager's order); those that went stop being answered. */
  setSources(sources: readonly Source[]): void {
    this.#sources = sources;
    if (this.#listeners.size === 0) return;
    const present = new Set(sources);
    for (const [id, { source, stop }] of this.#answering) {
      if (!present.has(source)) {
        stop();
        this.#answering.delete(id);
      }
    }
    for (const source of sources) this.#answer(source);
    this.#recompute();
  }

  get = (): readonly ServerElicitation[] => this.#list;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    if (this.#listeners.size === 1) {
      for (const source of this.#sources) this.#answer(source);
      this.#recompute();
    }
    return () => {
      if (!this.#listeners.delete(listener) || this.#listeners.size > 0) return;
      for (const { stop } of this.#answering.values()) stop();
      this.#answering.clear();
      this.#recompute();
    };
  };

  #answer(source: Source): void {
    if (this.#answering.get(source.id)?.source === source) return;
    this.#answering.get(source.id)?.stop();
    const stop = source.requests.subscribeElicitations(() => this.#recompute());
    this.#answering.set(source.id, { source, stop });
  }

  #recompute(): void {
    const next: ServerElicitation[] = [];
    for (const source of this.#sources) {
      if (this.#answering.get(source.id)?.source !== source) continue;
      for (const pending of source.requests.getElicitations()) {
        let item = this.#wrapped.get(pending);
        if (!item) {
          item = { ...pending, serverId: source.id, serverName: source.name };
          this.#wrapped.set(pending, item);
        }
        next.push(item);
      }
    }
    const same =
      next.length === this.#list.length && next.every((item, i) => item === this.#list[i]);
    if (same) return;
    this.#list = next.length === 0 ? NONE : next;
    for (const listener of [...this.#listeners]) listener();
  }
}
