import { McpQueryError } from './errors';

/** Checks of what a key or a server hands us, for the request modules (prompts, tasks…). */

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const isName = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0;

/** Prompt arguments and completion context are strings by name (the spec's shape). */
export const isStrings = (value: unknown): value is Record<string, string> =>
  isObject(value) && Object.values(value).every((entry) => typeof entry === 'string');

/** Arguments of the wrong shape: no request. */
export function invalidArguments(what: string): McpQueryError {
  return new McpQueryError('INVALID_ARGUMENTS', `${what}; nothing was sent`);
}

/** Accepts any value: the request modules check what they read themselves. */
export const anything = {
  '~standard': {
    version: 1 as const,
    vendor: 'mcp-react-query',
    validate: (value: unknown) => ({ value }),
  },
};
