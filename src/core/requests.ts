import type { Client, LoggingLevel, ServerCapabilities } from '@modelcontextprotocol/client';
import { McpQueryError } from './errors';
import type { McpRequestKey } from './keys';

/** How a request is sent: cancelled by the query's signal, bounded, with `_meta` if any. */
export interface AskOptions {
  signal: AbortSignal;
  timeout: number;
  /** `_meta` for the request (2026-07-28: the log level asked for: `logMeta`). */
  meta: LogMeta | undefined;
}

const CAPABILITY = { prompt: 'prompts', completion: 'completions' } as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isName = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
/** Prompt arguments and completion context are strings by name (the spec's shape). */
const isStrings = (value: unknown): value is Record<string, string> =>
  isObject(value) && Object.values(value).every((entry) => typeof entry === 'string');

function invalid(what: string): McpQueryError {
  return new McpQueryError('INVALID_ARGUMENTS', `${what}; nothing was sent`);
}

/**
 * A prompt or completion key, sent: checked first (a key is plain data anyone can build), and
 * only to a server that declared the capability; otherwise a typed error and no request.
 */
export function ask(
  client: Client,
  request: Exclude<McpRequestKey, { kind: 'task' }>,
  { signal, timeout, meta }: AskOptions,
): Promise<unknown> {
  const capability = CAPABILITY[request.kind];
  if (!supports(client.getServerCapabilities(), capability)) {
    return Promise.reject(notSupported(capability));
  }
  const options = { signal, timeout };
  if (request.kind === 'prompt') {
    const { name, args } = request;
    if (!isName(name) || !isStrings(args)) {
      return Promise.reject(invalid('a prompt needs a name and string arguments'));
    }
    return client.getPrompt({ name, arguments: args, ...meta }, options);
  }
  const { ref, argument, context } = request;
  const reference = isObject(ref) ? ref : {};
  const refOk =
    (reference.type === 'ref/prompt' && isName(reference.name)) ||
    (reference.type === 'ref/resource' && isName(reference.uri));
  if (
    !refOk ||
    !isObject(argument) ||
    !isName(argument.name) ||
    typeof argument.value !== 'string' ||
    !isObject(context) ||
    (context.arguments !== undefined && !isStrings(context.arguments))
  ) {
    return Promise.reject(
      invalid('a completion needs a prompt or template, an argument name and a string value'),
    );
  }
  return client.complete(
    {
      ref: reference as never,
      argument: { name: argument.name, value: argument.value },
      ...(context.arguments !== undefined && { context: { arguments: context.arguments } }),
      ...meta,
    },
    options,
  );
}

/** Whether the server declared this capability (an empty object declares it). */
export function supports(
  capabilities: ServerCapabilities | undefined,
  capability: keyof ServerCapabilities,
): boolean {
  return isObject(capabilities?.[capability]);
}

/**
 * Where a 2026-07-28 server is told the log level (each request's `_meta`: it sends the
 * request's `notifications/message` only then); undefined on 2025, where `logging/setLevel`
 * says it once per session, and when nobody asked or the server declared no logging.
 */
export function logMeta(client: Client, level: string | undefined): LogMeta | undefined {
  return level !== undefined &&
    client.getProtocolEra() === 'modern' &&
    supports(client.getServerCapabilities(), 'logging')
    ? { _meta: { 'io.modelcontextprotocol/logLevel': level } }
    : undefined;
}

/** Request params' `_meta`, spread into them. */
export type LogMeta = { _meta: Record<string, unknown> };

/**
 * Tell a 2025 server the log level (`logging/setLevel`), where it declared logging; undefined
 * where nothing is sent (2026-07-28 has no such request: `logMeta` says it per request).
 */
export function setLevel(client: Client, level: LoggingLevel | undefined) {
  return level !== undefined &&
    client.getProtocolEra() === 'legacy' &&
    supports(client.getServerCapabilities(), 'logging')
    ? client.setLoggingLevel(level)
    : undefined;
}

export function notSupported(capability: string): McpQueryError {
  return new McpQueryError(
    'NOT_SUPPORTED',
    `the server did not declare ${capability}; nothing was sent`,
  );
}
