import {
  hashKey,
  type QueryCacheNotifyEvent,
  type QueryKey,
  QueryObserver,
} from '@tanstack/query-core';
import { McpQueryError } from '../core/errors';
import type { McpEvent } from '../core/events';
import { whileAlive } from '../core/lifetime';
import { mostVerbose } from '../core/logLevels';
import { FORWARDED, type GroupLink, isGroupKey } from './link';
import { MAX_TABS, type Member, Members } from './members';
import { type TabMessage, toWire } from './protocol';
import { callFor, readFor } from './serving';
import { UnmatchedSample } from './unmatchedSample';
import { MAX_ITEMS } from './validate';

/** How long a new leader lets the other tabs introduce themselves before it counts them. */
const GROUP_SETTLE_MS = 100;

/** Messages only the leader acts on. */
export type LeaderMessage = Extract<
  TabMessage,
  { type: 'hello' | 'interest' | 'bye' | 'read' | 'call' | 'cancel' | 'waiting' | 'answer' }
>;

export interface LeaderOptions {
  /** Leader changes the group has seen, this one included. */
  handovers: number;
  /** It took over from another leader (the other tabs are there, and say hello again). */
  handover: boolean;
  /** How many tabs share the connection now (this one included). */
  onGroup(tabs: number): void;
}

/** The most reads and calls one tab may have running through the leader at once. */
export const MAX_REQUESTS_PER_TAB = 256;
/** Why one more is refused (not run): every version says it so (requests.ts reads it). */
export const TOO_MANY_REQUESTS = 'too many requests from one tab at once';

/**
 * The tab holding the connection, for the others: it holds every key they
 * hold through QueryObservers (so its subscriptions are the union), answers
 * their reads from one flight per key and runs their tool calls, forwards
 * its connection's events, broadcasts every successful read, and notices
 * tabs that closed without a goodbye. Lives from winning the leader lock to
 * `stop()`.
 */
export class Leader {
  readonly #link: GroupLink;
  readonly #options: LeaderOptions;
  /** From winning the leader lock to `stop()`: what the leader started ends with it. */
  readonly #life = new AbortController();
  /** The other tabs, what they hold, and since when they are known. */
  readonly #members: Members;
  readonly #holds = new Map<string, () => void>();
  /** Other tabs' reads and tool calls running here, by `tab/id`, with the tab that made each. */
  readonly #calls = new Map<string, { tab: string; controller: AbortController }>();
  #outbox: McpEvent[] = [];
  /** What of the updates for URIs nobody subscribed goes to the others: a bounded sample. */
  readonly #unmatched: UnmatchedSample;
  /** Set for a moment after taking over, while the other tabs introduce themselves. */
  #settling: ReturnType<typeof setTimeout> | undefined;
  readonly #stops: Array<() => void> = [];

  constructor(link: GroupLink, options: LeaderOptions) {
    this.#link = link;
    this.#options = options;
    this.#unmatched = new UnmatchedSample(() => link.context.clock.now());
    this.#members = new Members(link, this.#life.signal, (tab) => this.#left(tab));
    const { context, settings } = link;
    const liveness = setInterval(() => this.#members.sweep(), settings.livenessMs);
    this.#stops.push(
      context.bus.subscribe((event) => this.#forward(event)),
      () => clearInterval(liveness),
    );
    // This connection's questions for the user go to every tab that answers them.
    const requests = context.serverRequests;
    if (requests) {
      this.#stops.push(
        requests.pending.subscribe(() =>
          this.#link.send({ type: 'elicitations', items: requests.shared() }),
        ),
        () => requests.setRemoteAnswerers(0),
      );
    }
    link.send({ type: 'leader', tab: link.tab, handovers: options.handovers });
    if (!options.handover) {
      this.#groupChanged();
      return;
    }
    // The other tabs introduce themselves now: count them once, rather than
    // from 1 up, so no tab shows the group shrinking and growing back.
    this.#settling = setTimeout(() => {
      this.#settling = undefined;
      this.#groupChanged();
    }, GROUP_SETTLE_MS);
    this.#stops.push(() => clearTimeout(this.#settling));
  }

  /**
   * What a tab that joins learns of the group's state: this connection's facts, its questions;
   * a newcomer also the latest unmatched updates (once: a tab that says hello again has them).
   */
  #welcome(to: string, newcomer: boolean): void {
    const { context } = this.#link;
    const at = context.clock.now();
    const facts = context
      .facts()
      .filter((fact) => FORWARDED.has(fact.type))
      .map((fact) => ({ ...fact, at }) as McpEvent);
    this.#sendEvents([...facts, ...(newcomer ? this.#unmatched.latest() : [])], to);
    const items = context.serverRequests?.shared() ?? [];
    if (items.length > 0) this.#link.send({ type: 'elicitations', to, items });
  }

  /** This tab leaves: release what it held for the others, abort their calls. */
  stop(): void {
    this.#life.abort();
    for (const stop of this.#stops.splice(0)) stop();
    for (const release of this.#holds.values()) release();
    this.#holds.clear();
    for (const { controller } of this.#calls.values()) controller.abort();
    for (const tab of this.#members.tabs()) this.#members.leave(tab);
  }

  receive(message: LeaderMessage): void {
    if (message.type === 'bye') {
      if (this.#members.leave(message.tab)) this.#left(message.tab);
      return;
    }
    // A message in this tab's own name is another script's: this tab never hears itself.
    if (message.tab === this.#link.tab) return;
    // Requests of a tab that never said hello make it a member (it said hello before any tab
    // led, and its first words to this one are its pending reads): counted at once, whatever
    // the message. Past MAX_TABS, new tabs are not served at all: their reads and calls are
    // answered so (a tab may follow this one having heard its answer to another newcomer), so
    // they do not wait out their timeouts.
    const known = this.#members.has(message.tab);
    const member = this.#members.join(message.tab);
    if (!member) {
      if (message.type === 'read' || message.type === 'call') this.#refuse(message.tab, message.id);
      return;
    }
    if (!known && message.type !== 'hello') {
      // Its hello went unanswered: what it missed (events are forwarded only while
      // members are known, and the connection may have come up since) goes now.
      this.#welcome(message.tab, true);
      this.#groupChanged();
    }
    const { context, tab } = this.#link;
    switch (message.type) {
      case 'hello': {
        this.#link.send({ type: 'leader', tab, handovers: this.#options.handovers });
        this.#welcome(message.tab, !known);
        this.#groupChanged();
        break;
      }
      case 'interest':
        member.keys = message.keys.filter((key) => isGroupKey(context.keys, key));
        member.answering = message.answering === true;
        member.logLevel = message.logLevel;
        this.reconcile();
        break;
      case 'read':
        void this.#serve(member, message.tab, message.id, (signal) =>
          readFor(this.#link, message.key, message.fresh, signal),
        );
        break;
      case 'call':
        void this.#serve(member, message.tab, message.id, (signal) =>
          callFor(this.#link, message.tab, message.id, message.variables, signal),
        );
        break;
      case 'cancel':
        // Its place frees at once (the tab freed its own, and may send the next into it).
        this.#calls
          .get(`${message.tab}/${message.id}`)
          ?.controller.abort(
            new McpQueryError('SUPERSEDED', 'the tab that made the request cancelled it'),
          );
        break;
      case 'waiting': {
        // The tab waits on for those still running here (for a leader that says nothing, it
        // does not).
        const ids = message.ids.filter((id) => this.#calls.has(`${message.tab}/${id}`));
        if (ids.length > 0) this.#reply({ type: 'working', to: message.tab, ids });
        break;
      }
      case 'answer':
        context.serverRequests?.answer(message.id, message.result);
        break;
    }
  }

  /** Content this tab read goes to every other tab that has the entry. */
  onCacheEvent(event: QueryCacheNotifyEvent): void {
    if (event.type !== 'updated' || event.action.type !== 'success' || this.#members.size === 0) {
      return;
    }
    const { queryKey, state } = event.query;
    this.#link.send({
      type: 'data',
      key: queryKey,
      data: state.data,
      updatedAt: state.dataUpdatedAt,
    });
  }

  /**
   * One read or call of another tab, answered with a reply; one under an id running already is
   * not run again (sent again after a refusal a script made up: the running one's reply answers
   * it). At most MAX_REQUESTS_PER_TAB run for one tab at once; more are refused. One its tab
   * cancelled (or the tab left) gives its place up at once; its reply still goes when it ends.
   */
  async #serve(
    member: Member,
    tab: string,
    id: number,
    run: (signal: AbortSignal) => Promise<{ value: unknown; updatedAt?: number | undefined }>,
  ): Promise<void> {
    const name = `${tab}/${id}`;
    if (this.#calls.has(name)) return;
    if (member.running >= MAX_REQUESTS_PER_TAB) {
      const error = new McpQueryError('INVALID_OPTIONS', TOO_MANY_REQUESTS);
      this.#reply({ type: 'reply', to: tab, id, error: toWire(error) });
      return;
    }
    member.running += 1;
    const controller = new AbortController();
    let held = true;
    const free = () => {
      if (!held) return;
      held = false;
      member.running -= 1;
      if (this.#calls.get(name)?.controller === controller) this.#calls.delete(name);
    };
    controller.signal.addEventListener('abort', free, { once: true });
    this.#calls.set(name, { tab, controller });
    let reply: TabMessage;
    try {
      const { value, updatedAt } = await run(controller.signal);
      reply = { type: 'reply', to: tab, id, value, ...(updatedAt !== undefined && { updatedAt }) };
    } catch (error) {
      reply = { type: 'reply', to: tab, id, error: toWire(error) };
    } finally {
      free();
    }
    this.#reply(reply);
  }

  /** A tab this one does not serve (its roster full) is told so, and that it may ask again. */
  #refuse(tab: string, id: number): void {
    const error = new McpQueryError(
      'NOT_CONNECTED',
      `the tab holding the connection serves at most ${MAX_TABS} tabs and cannot take this one now; it asks again shortly`,
    );
    this.#reply({ type: 'reply', to: tab, id, error: toWire(error), stranger: true });
  }

  /** A reply to another tab's request, unless this tab no longer leads (the next leader answers). */
  readonly #reply = whileAlive(this.#life.signal, (reply: TabMessage) => this.#link.send(reply));

  /**
   * A tab left the group (a goodbye, or found gone): the tool calls it made are cancelled, as
   * its own connection would have ended them; nobody is left to see their results.
   */
  #left(tab: string): void {
    for (const call of this.#calls.values()) {
      if (call.tab === tab) {
        call.controller.abort(new McpQueryError('SUPERSEDED', 'the tab that made the call closed'));
      }
    }
    this.reconcile();
    this.#groupChanged();
  }

  /**
   * Hold, here, every key some other tab holds: the leader's subscriptions
   * are the union. Count the tabs that answer elicitations, and ask for the
   * most verbose log level any tab asks for.
   */
  reconcile(): void {
    const wanted = new Map<string, QueryKey>();
    let answering = 0;
    const levels = [this.#link.logLevel()];
    for (const member of this.#members.values()) {
      for (const key of member.keys) wanted.set(hashKey(key), key);
      if (member.answering) answering += 1;
      levels.push(member.logLevel);
    }
    this.#link.context.serverRequests?.setRemoteAnswerers(answering);
    this.#link.local.setLogLevel(mostVerbose(levels));
    for (const [hash, release] of this.#holds) {
      if (wanted.has(hash)) continue;
      release();
      this.#holds.delete(hash);
    }
    for (const [hash, key] of wanted) {
      if (this.#holds.has(hash)) continue;
      // Cached content is not read on mount: the catch-up after the
      // acknowledgement re-reads it, once (rule 4).
      const observer = new QueryObserver(this.#link.context.queryClient, {
        queryKey: key,
        refetchOnMount: false,
        refetchOnWindowFocus: false,
      });
      this.#holds.set(
        hash,
        observer.subscribe(() => {}),
      );
    }
  }

  #forward(event: McpEvent): void {
    if (!FORWARDED.has(event.type)) return;
    // What a server says of URIs nobody here wants: a bounded sample (unmatchedSample.ts).
    const others = this.#members.size > 0;
    if (event.type === 'updated' && !event.matched && !this.#unmatched.take(event, others)) return;
    if (!others) return;
    // This tab's own shutdown is not the group's state: the next leader's is.
    if (event.type === 'connection' && event.state.phase === 'closed') return;
    if (event.type === 'status' && event.status === 'closed') return;
    this.#outbox.push(event);
    if (this.#outbox.length > 1) return;
    queueMicrotask(() => {
      const events = this.#outbox;
      this.#outbox = [];
      this.#sendEvents(events);
    });
  }

  /**
   * Events to every tab, or one: in messages the others accept (a longer one is refused whole),
   * in order. At least one message: to a tab that joins, it is also its welcome (membership.ts).
   */
  #sendEvents(events: McpEvent[], to?: string): void {
    for (let start = 0; start === 0 || start < events.length; start += MAX_ITEMS) {
      const part = events.slice(start, start + MAX_ITEMS);
      this.#link.send({ type: 'events', ...(to !== undefined && { to }), events: part });
    }
  }

  #groupChanged(): void {
    if (this.#settling !== undefined) return;
    const tabs = this.#members.size + 1;
    this.#link.send({ type: 'group', tabs, handovers: this.#options.handovers });
    this.#options.onGroup(tabs);
  }
}
