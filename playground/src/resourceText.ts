import type { ReadResourceResult } from '@modelcontextprotocol/client';

/** The first text block of a read result, if there is one. */
export function textOf(result: ReadResourceResult | undefined): string | undefined {
  const first = result?.contents[0];
  return first && 'text' in first && typeof first.text === 'string' ? first.text : undefined;
}
