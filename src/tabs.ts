/**
 * `mcp-react-query/tabs`: one connection for all of a browser's tabs (docs/design.md, rule 14). Kept
 * out of the main entry so apps that do not share pay nothing for it.
 *
 * ```tsx
 * import { shareAcrossTabs } from 'mcp-react-query/tabs';
 * const tabs = shareAcrossTabs();
 * <McpProvider url="/mcp" shareAcrossTabs={tabs}>…</McpProvider>
 * ```
 */
export type { ChannelLike, LocksLike, TabMessage } from './tabs/protocol';
export { type PageLike, type ShareAcrossTabsOptions, shareAcrossTabs } from './tabs/tabSharing';
