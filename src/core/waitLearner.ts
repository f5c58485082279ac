import { newcomers, type Plan, type PlannedStream, plan, type Situation } from './listenPlan';

/** The most newcomer groups opened at once, without a wait, before waiting is tried again. */
const MAX_EAGER_RUN = 16;

/**
 * `plan`, taught by the last waits whether waiting for more newcomers pays
 * off. A list that grows on its own (rows appended as they arrive) brings
 * more while we wait; one that loads its next page only once the last one
 * shows brings nothing until this coverage comes, so every wait only delays
 * it. After a wait that gathered nothing, the next 1, 2, 4, … groups (at
 * most MAX_EAGER_RUN) open at once (`eager`); once two waits in a row have
 * gathered nothing, the wait after such a run, which checks whether waiting
 * pays again, ends after QUIET_MS without a newcomer (`doubtful`). A wait
 * that gathered some ends that, and so do newcomers that come while a
 * request is in flight (`grewWhileAsking`): only a list that grows on its
 * own adds rows before its last ones are covered.
 */
export class WaitLearner {
  #run = 0;
  #nextRun = 1;
  /** Newcomers when the current wait began. */
  #waitedWith: number | undefined;

  plan<S extends PlannedStream>(now: Omit<Situation<S>, 'eager' | 'doubtful'>): Plan<S> {
    // Two fruitless waits in a row (a busy machine's pause explains one).
    const next = plan({ ...now, eager: this.#run > 0, doubtful: this.#nextRun > 2 });
    if (next.kind === 'open') this.#opened(next.added);
    else if (next.retryInMs !== undefined) {
      this.#waitedWith ??= newcomers(now.streams, now.keep).length;
    }
    return next;
  }

  /** New URIs came while a listen request was in flight: the list grows on its own. */
  grewWhileAsking(): void {
    this.#trust();
  }

  /** Waiting pays: wait with the full patience, and the next fruitless wait starts a run of 1. */
  #trust(): void {
    this.#run = 0;
    this.#nextRun = 1;
  }

  #opened(added: number): void {
    const waitedWith = this.#waitedWith;
    this.#waitedWith = undefined;
    if (waitedWith === undefined) {
      if (this.#run > 0) this.#run -= 1;
    } else if (added > waitedWith) {
      this.#trust();
    } else {
      this.#run = this.#nextRun;
      this.#nextRun = Math.min(this.#nextRun * 2, MAX_EAGER_RUN);
    }
  }
}
