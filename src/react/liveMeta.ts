import { SUBSCRIBE_META } from '../core/observerHolds';

/** The query `meta` that tells the provider whether this observer holds its subscription. */
export function liveMeta(
  meta: Record<string, unknown> | undefined,
  subscribe: boolean,
): Record<string, unknown> | undefined {
  return subscribe ? meta : { ...meta, [SUBSCRIBE_META]: false };
}
