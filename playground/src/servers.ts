// The library's server manager from source, as an app would import 'mcp-react-query/servers'.
export * from '../../src/servers';
