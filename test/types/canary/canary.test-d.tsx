// Each line marked `canary` is wrong on purpose; scripts/check-types.mjs requires an error on
// every one of them and on no other line.
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import type { QueryClient } from '@tanstack/react-query';
import { expectTypeOf } from 'expect-type';
import { resourceQueryOptions, useResource } from 'mcp-react-query';

declare const queryClient: QueryClient;

export function Canary() {
  const length = useResource('x', { select: (r) => r.contents.length });
  expectTypeOf(length.data).toEqualTypeOf<string | undefined>(); // canary
  expectTypeOf(useResource('x').data).toEqualTypeOf<ReadResourceResult>(); // canary
  expectTypeOf(useResource('x').data).toBeAny(); // canary
  return null;
}

const data = queryClient.getQueryData(resourceQueryOptions('x').queryKey);
expectTypeOf(data).toEqualTypeOf<unknown>(); // canary
