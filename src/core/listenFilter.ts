import type { McpSubscription } from '@modelcontextprotocol/client';
import { filterBit, type NotifiedList } from './lists';

/** A `subscriptions/listen` filter as it goes on the wire (2026-07-28). */
type Filter = { [K in (typeof filterBit)[NotifiedList]]?: true } & {
  resourceSubscriptions?: string[];
};

/** What a listen asks for. */
export interface Asked {
  uris: string[];
  lists: NotifiedList[];
}

/** The filter that asks for `uris` and `lists`. */
export function filterOf({ uris, lists }: Asked): Filter {
  const filter: Filter = {};
  for (const list of lists) filter[filterBit[list]] = true;
  if (uris.length > 0) filter.resourceSubscriptions = uris;
  return filter;
}

/**
 * What an acknowledgement granted of what was asked (rule 5): only what we
 * asked for counts. An acknowledgement naming URIs or lists we never
 * requested does not make them covered.
 */
export function grantedOf(
  { uris, lists }: Asked,
  honoredFilter: McpSubscription['honoredFilter'],
): { covered: Set<string>; listsCovered: Set<NotifiedList> } {
  const honored = honoredFilter as Filter;
  const granted = new Set(
    Array.isArray(honored.resourceSubscriptions) ? honored.resourceSubscriptions : [],
  );
  return {
    covered: new Set(uris.filter((uri) => granted.has(uri))),
    listsCovered: new Set(lists.filter((list) => honored[filterBit[list]] === true)),
  };
}
