/**
 * `mcp-react-query/devtools` under the `development` export condition, and
 * `mcp-react-query/devtools/production` always: the real panel.
 */
export { McpDevtools, type McpDevtoolsProps } from './react/devtools/McpDevtools';
