/**
 * The other entry points: `/core` is the same API without React (and without 'use client'),
 * `/devtools` is one component whose type does not depend on the build mode.
 */
import { expectTypeOf } from 'expect-type';
import * as main from 'mcp-react-query';
import * as core from 'mcp-react-query/core';
import { McpDevtools, type McpDevtoolsProps } from 'mcp-react-query/devtools';
import { McpDevtools as AlwaysOnDevtools } from 'mcp-react-query/devtools/production';

expectTypeOf(core.resourceQueryOptions).toEqualTypeOf(main.resourceQueryOptions);
expectTypeOf(core.resourceListQueryOptions).toEqualTypeOf(main.resourceListQueryOptions);
expectTypeOf(core.mcpKeys).toEqualTypeOf(main.mcpKeys);
expectTypeOf(core.createMcpKeys).toEqualTypeOf(main.createMcpKeys);
expectTypeOf(core.McpCacheSync).toEqualTypeOf(main.McpCacheSync);
expectTypeOf(core.expandTemplate).toEqualTypeOf(main.expandTemplate);
expectTypeOf(core.isNotFound).toEqualTypeOf(main.isNotFound);
expectTypeOf(core.McpQueryError).toEqualTypeOf(main.McpQueryError);
expectTypeOf(core.resourceQueryOptions('x')).toEqualTypeOf<
  core.McpQueryOptions<import('@modelcontextprotocol/client').ReadResourceResult>
>();
// React lives only in the main entry.
expectTypeOf(core).not.toHaveProperty('useResource');
expectTypeOf(core).not.toHaveProperty('McpProvider');
// Devtools moved to their own entry (production-safe by export condition).
expectTypeOf(main).not.toHaveProperty('McpDevtools');

expectTypeOf<McpDevtoolsProps>().toEqualTypeOf<{ initialOpen?: boolean; scope?: string }>();
expectTypeOf(AlwaysOnDevtools).parameter(0).toEqualTypeOf<McpDevtoolsProps>();
export const element = <McpDevtools initialOpen scope="b" />;
// @ts-expect-error production is decided by the build, not by a prop
export const forced = <McpDevtools forceInProduction />;
