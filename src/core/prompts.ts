import type { GetPromptResult } from '@modelcontextprotocol/client';
import { createMcpKeys } from './keys';
import { type McpQueryOptions, mcpQueryOptions, type ScopeOption } from './queryOptions';
import { defineRequest, notSupported, supports } from './requests';
import { invalidArguments, isName, isStrings } from './shapes';

/**
 * `prompts/get` as a query: kept fresh by the prompts list's `list_changed` (a shown prompt
 * holds it; its first read waits for that coverage), sent only to a server that declared
 * `prompts`, with string arguments.
 */
export function definePrompts(): void {
  defineRequest('prompt', {
    list: 'prompts',
    run(client, [name, args], { signal, timeout, meta }) {
      if (!supports(client.getServerCapabilities(), 'prompts')) {
        return Promise.reject(notSupported('prompts'));
      }
      if (!isName(name) || !isStrings(args)) {
        return Promise.reject(invalidArguments('a prompt needs a name and string arguments'));
      }
      return client.getPrompt({ name, arguments: args, ...meta }, { signal, timeout });
    },
  });
}

definePrompts();

/**
 * One prompt with its arguments (`prompts/get`), the same the `usePrompt` hook uses. Kept fresh
 * by `prompts/list_changed` while something shows it; a server that declared no `prompts`
 * gets no request (an `McpQueryError` `NOT_SUPPORTED`).
 */
export function promptQueryOptions(
  name: string,
  args?: Record<string, string>,
  { scope }: ScopeOption = {},
): McpQueryOptions<GetPromptResult> {
  return mcpQueryOptions<GetPromptResult>(createMcpKeys(scope).prompt(name, args), scope);
}
