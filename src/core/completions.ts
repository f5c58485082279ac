import type {
  CompleteResult,
  PromptReference,
  ResourceTemplateReference,
} from '@modelcontextprotocol/client';
import { createMcpKeys } from './keys';
import { type McpQueryOptions, mcpQueryOptions, type ScopeOption } from './queryOptions';
import { defineRequest, notSupported, supports } from './requests';
import { invalidArguments, isName, isObject, isStrings } from './shapes';

/** What to complete: a prompt's argument or a resource template's variable, as typed so far. */
export interface CompletionRequest {
  ref: PromptReference | ResourceTemplateReference;
  /** The argument (or template variable) being typed. */
  argument: string;
  /** What the user typed so far. */
  value: string;
  /** The other arguments already chosen (a server may narrow by them). */
  context?: Record<string, string>;
}

/** How long an answer is reused, and kept (a short while: the user is typing). */
const COMPLETION_CACHE_MS = 30_000;

/** `completion/complete` as a query, sent only to a server that declared `completions`. */
export function defineCompletions(): void {
  defineRequest('completion', {
    run(client, [ref, argument, context], { signal, timeout, meta }) {
      if (!supports(client.getServerCapabilities(), 'completions')) {
        return Promise.reject(notSupported('completions'));
      }
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
          invalidArguments(
            'a completion needs a prompt or template, an argument name and a string value',
          ),
        );
      }
      return client.complete(
        {
          ref: reference as CompletionRequest['ref'],
          argument: { name: argument.name, value: argument.value },
          ...(context.arguments !== undefined && { context: { arguments: context.arguments } }),
          ...meta,
        },
        { signal, timeout },
      );
    },
  });
}

defineCompletions();

/**
 * The server's suggestions for one argument as typed so far (`completion/complete`), reused a
 * short while per (ref, argument, value, context). A server that declared no `completions`
 * gets no request (`NOT_SUPPORTED`).
 */
export function completionQueryOptions(
  { ref, argument, value, context }: CompletionRequest,
  { scope }: ScopeOption = {},
): McpQueryOptions<CompleteResult> & { staleTime: number; gcTime: number } {
  const key = createMcpKeys(scope).completion(
    ref,
    { name: argument, value },
    context && { arguments: context },
  );
  return {
    ...mcpQueryOptions<CompleteResult>(key, scope),
    staleTime: COMPLETION_CACHE_MS,
    gcTime: COMPLETION_CACHE_MS,
  };
}
