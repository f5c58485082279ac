/**
 * The library as an app's production bundle has it. The package is `sideEffects: false`, so a
 * bundler leaves out `core/mcpDiagnostics` unless the app shows diagnostics
 * (`useMcpDiagnostics()`, `mcpDiagnostics()`); only an app that does has every connection fold
 * its events into them and fingerprint every read. Node does not tree-shake: importing the
 * package's index here would load that module, and every "ours" would pay for diagnostics
 * nobody shows. So the bench imports the modules an app uses, and the browser bench (a
 * production build) matches it.
 */
export type { McpEvent } from '../../src/core/events';
export { McpProvider } from '../../src/react/McpProvider';
export { useMcp } from '../../src/react/useMcp';
export { useMcpEvents } from '../../src/react/useMcpEvents';
export { useResource } from '../../src/react/useResource';
