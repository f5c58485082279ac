// The library from source (HMR on edits). An app would import from 'mcp-react-query'; a Vite
// alias alone is not enough here, because tsc resolves that name to the built dist/ instead.
export * from '../../src/index';
