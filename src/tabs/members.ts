import type { LoggingLevel } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import { delay, whileAlive, within } from '../core/lifetime';
import type { GroupLink } from './link';

/** Another tab of the group, as the leader knows it. */
export interface Member {
  keys: QueryKey[];
  /** Its reads and calls running here now. */
  running: number;
  since: number;
  answering: boolean;
  /** The log level its `useServerLog` asks for, if any. */
  logLevel: LoggingLevel | undefined;
  /** Withdraws the request for the tab's lock once the tab is no longer a member. */
  watch: AbortController;
}

/** A tab's lock free within this long of its joining may not have been taken yet. */
const JOIN_GRACE_MS = 1000;
/** The most tabs a leader serves: more is a script making up tab ids, not a browser. */
export const MAX_TABS = 256;

/** The lock a tab holds while it lives: the leader tells a closed tab from a quiet one by it. */
export function tabLock(group: string, tab: string): string {
  return `${group}|tab|${tab}`;
}

/**
 * The other tabs of the group, as the leader knows them, and how it learns
 * that one is gone without a goodbye: it asks for each member's own lock,
 * which the tab holds while it lives, so the grant says the tab closed or
 * crashed, whatever a background tab's timers do; a sweep of the held locks
 * on a timer is the fallback. Lives as long as `signal` (the leader's).
 */
export class Members {
  readonly #link: GroupLink;
  readonly #signal: AbortSignal;
  readonly #gone: (tab: string) => void;
  readonly #members = new Map<string, Member>();

  /** `gone`: a member was found gone (it is no longer one when this is called). */
  constructor(link: GroupLink, signal: AbortSignal, gone: (tab: string) => void) {
    this.#link = link;
    this.#signal = signal;
    this.#gone = gone;
  }

  get size(): number {
    return this.#members.size;
  }

  has(tab: string): boolean {
    return this.#members.has(tab);
  }

  values(): IterableIterator<Member> {
    return this.#members.values();
  }

  tabs(): string[] {
    return [...this.#members.keys()];
  }

  /** The tab's record, made (and its lock watched) when the tab is new; none past MAX_TABS. */
  join(tab: string): Member | undefined {
    let member = this.#members.get(tab);
    if (!member) {
      if (this.#members.size >= MAX_TABS) return undefined;
      const since = this.#link.context.clock.now();
      member = {
        keys: [],
        running: 0,
        since,
        answering: false,
        logLevel: undefined,
        watch: within(this.#signal),
      };
      this.#members.set(tab, member);
      this.#watch(tab, member);
    }
    return member;
  }

  /** The tab is no longer a member. Whether it was one. */
  leave(tab: string): boolean {
    this.#members.get(tab)?.watch.abort();
    return this.#members.delete(tab);
  }

  /** The fallback: members known for a while whose lock nobody holds are gone. */
  sweep(): void {
    if (this.#members.size === 0) return;
    this.#link.settings.locks.query().then(
      whileAlive(this.#signal, (snapshot: { held?: { name?: string }[] }) => {
        const held = new Set((snapshot.held ?? []).map((lock) => lock.name));
        const cutoff = this.#link.context.clock.now() - this.#link.settings.livenessMs;
        for (const [tab, member] of [...this.#members]) {
          if (member.since > cutoff || held.has(tabLock(this.#link.name, tab))) continue;
          this.leave(tab);
          this.#gone(tab);
        }
      }),
      () => {},
    );
  }

  /**
   * Asks for the tab's own lock. A grant just after the tab joined may only mean it has not
   * taken its lock yet: asked again later. Bound to the member's watch: once it left (or this
   * tab stopped leading), a grant means nothing.
   */
  #watch(tab: string, member: Member): void {
    const signal = member.watch.signal;
    const gone = whileAlive(signal, () => {
      if (this.#link.context.clock.now() - member.since < JOIN_GRACE_MS) {
        delay(signal, JOIN_GRACE_MS, () => this.#watch(tab, member));
        return;
      }
      this.leave(tab);
      this.#gone(tab);
    });
    const { locks } = this.#link.settings;
    locks.request(tabLock(this.#link.name, tab), { signal }, async () => gone()).catch(() => {});
  }
}
