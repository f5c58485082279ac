import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';

/**
 * A busy loop in a child process, for as long as a run lasts: on this
 * 2-core machine the server, the client and React then share what is left,
 * and every step and timer of ours comes later than on a quiet machine.
 */
export class CpuHog {
  readonly #child: ChildProcess;

  constructor() {
    this.#child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  }

  /** CPU time the hog got (Linux /proc; undefined elsewhere). */
  cpuMs(): number | undefined {
    try {
      const stat = readFileSync(`/proc/${this.#child.pid}/stat`, 'utf8');
      // Fields after the command name: state is 3rd, utime 14th and stime 15th (clock ticks).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return undefined;
    }
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = once(this.#child, 'exit');
    this.#child.kill('SIGKILL');
    await exited;
  }
}
