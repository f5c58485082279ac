/**
 * Every McpCacheSync a test mounted, so its teardown can be awaited: a provider that unmounts
 * tears down on the next macrotask, and a test that closes its server before that sees its own
 * teardown fail (a 2025 session that cannot be ended, a reconnect into a closed port).
 *
 * Importing this module starts the bookkeeping, through the public `mount()` (a provider mounts
 * the McpCacheSync it made in an effect; code mounts its own), so nothing here depends on how
 * McpProvider or McpCacheSync work inside.
 */
import { QueryClient } from '@tanstack/query-core';
import { McpCacheSync } from '../../src/core/mcpCacheSync';

/** On globalThis: test/support/setup.ts ends what a file left mounted without loading the library. */
const MOUNTED = Symbol.for('mcp-react-query.test.mounted');
const scope = globalThis as { [MOUNTED]?: Set<McpCacheSync> };
scope[MOUNTED] ??= new Set();
const mounted = scope[MOUNTED];
/** The first `dispose()` of each McpCacheSync: later calls await the same teardown. */
const disposing = new WeakMap<McpCacheSync, Promise<void>>();

const INSTALLED = Symbol.for('mcp-react-query.test.syncs');
const prototype = McpCacheSync.prototype as McpCacheSync & { [INSTALLED]?: true };
if (!prototype[INSTALLED]) {
  prototype[INSTALLED] = true;
  const { mount, dispose } = McpCacheSync.prototype;
  prototype.mount = function (this: McpCacheSync) {
    mounted.add(this);
    return mount.call(this);
  };
  // Until dispose() itself returns one promise on every call (issue 18), the teardown a
  // provider started on its own is the one awaited here, not an early `undefined`.
  prototype.dispose = function (this: McpCacheSync) {
    let done = disposing.get(this);
    if (!done) {
      done = dispose.call(this);
      disposing.set(this, done);
    }
    return done;
  };
  // Loud rather than silently tracking nothing, should these ever become instance fields.
  const probe = new McpCacheSync({ queryClient: new QueryClient(), url: 'http://127.0.0.1:9/' });
  if (Object.hasOwn(probe, 'mount') || Object.hasOwn(probe, 'dispose')) {
    throw new Error('test/support/syncs.ts: mount/dispose are no longer prototype methods');
  }
  void probe.dispose();
}

/** The McpCacheSyncs mounted since the last `disposeSyncs()`, in mount order. */
export function mountedSyncs(): McpCacheSync[] {
  return [...mounted];
}

/** The one McpCacheSync the test mounted (a single provider); throws if there are several. */
export function mountedSync(): McpCacheSync {
  const live = [...mounted];
  if (live.length !== 1) throw new Error(`expected one mounted McpCacheSync, found ${live.length}`);
  return live[0] as McpCacheSync;
}

/**
 * Disposes every McpCacheSync mounted since the last call and resolves once each teardown is
 * complete (transport closed, 2025 session ended). For `afterEach`, after testing-library's
 * `cleanup()` and before the servers close.
 */
export async function disposeSyncs(): Promise<void> {
  const syncs = [...mounted];
  mounted.clear();
  await Promise.all(syncs.map((sync) => sync.dispose()));
}
