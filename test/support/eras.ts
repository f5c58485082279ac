import type { ServerCapabilityOptions } from '../servers';
import { type ServerKind, type StartServerOptions, startServer, type TestServer } from '../servers';
import { atEnd } from './atEnd';

export interface EraCase {
  kind: ServerKind;
  era: 'modern' | 'legacy';
}

/** Every behaviour is tested against each real server: 2026-07-28, and 2025 on SDK v2 and v1. */
export const ERA_CASES: EraCase[] = [
  { kind: 'modern', era: 'modern' },
  { kind: 'legacy-v2', era: 'legacy' },
  { kind: 'legacy-v1', era: 'legacy' },
];

export function start(kind: ServerKind, options?: StartServerOptions): Promise<TestServer> {
  return startServer(kind, options);
}

/** A server of `kind` (declaring `capabilities` if given), closed at the end of the test. */
export async function serve(
  kind: ServerKind,
  capabilities?: ServerCapabilityOptions,
): Promise<TestServer> {
  const server = await start(kind, capabilities && { capabilities });
  atEnd(() => server.close());
  return server;
}

export const text = (uri: string, value: string, extra: object = {}) => ({
  uri,
  name: uri.replace(/\W+/g, '-'),
  mimeType: 'text/plain',
  text: value,
  ...extra,
});
