// The library's OAuth entry from source, as an app would import 'mcp-react-query/auth'.
export * from '../../src/auth';
