// `mcp-react-query/apps` from source, like mcp.ts does for the main entry.
export * from '../../src/apps';
