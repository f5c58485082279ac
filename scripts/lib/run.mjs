/** Small process helpers shared by the check scripts (plain JavaScript: nothing to compile). */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A dev dependency's executable (not npx: npx may go to the registry for a missing one). */
export const bin = (name, root = ROOT) => join(root, 'node_modules', '.bin', name);

/**
 * Runs a command; resolves with its exit code and output. `echo` streams the output as it
 * comes (for long steps); otherwise it is only returned.
 */
export function run(command, args, { cwd = ROOT, env = process.env, echo = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (stream) => (chunk) => {
      output += chunk;
      if (echo) stream.write(chunk);
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

/** `run`, but a non-zero exit is an error carrying the output. */
export async function must(command, args, options = {}) {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    const shown = options.echo === false ? `\n${result.output}` : '';
    throw new Error(`${[command, ...args].join(' ')} exited with ${result.code}${shown}`);
  }
  return result.output;
}

/** `node <script>`: the same Node that runs this script. */
export const node = (script, args, options) => must(process.execPath, [script, ...args], options);

export function seconds(since) {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

/** Runs `main`, prints a failure without a stack trace for expected ones, sets the exit code. */
export function main(fn) {
  fn().then(
    (code) => process.exit(code ?? 0),
    (error) => {
      console.error(error instanceof CheckFailed ? `\n✗ ${error.message}` : error);
      process.exit(1);
    },
  );
}

/** A check that failed on its own terms (the message says what and why). */
export class CheckFailed extends Error {}
