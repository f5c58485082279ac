// The library's tab-sharing entry from source, as an app would import 'mcp-react-query/tabs'.
export * from '../../src/tabs';
