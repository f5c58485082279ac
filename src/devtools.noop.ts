/**
 * `mcp-react-query/devtools` in every build that is not a development one (the export map's
 * default): renders nothing and imports nothing, so a production bundle carries no panel, no
 * event log and no Reconnect button. Same type as the real one (the export map points both at
 * `devtools.d.ts`), so an app renders `<McpDevtools />` unconditionally.
 */
import type { McpDevtoolsProps } from './react/devtools/McpDevtools';

export type { McpDevtoolsProps };

export function McpDevtools(_props: McpDevtoolsProps): null {
  return null;
}
