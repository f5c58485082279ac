import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/core/failure';

describe('a sign-in refused for want of PKCE', () => {
  it('is permanent (an error that names it), not a server to try again', () => {
    class PkceNotSupportedError extends Error {
      override readonly name = 'PkceNotSupportedError';
    }
    const error = new PkceNotSupportedError('the authorization server x lists no S256');
    const failure = classifyFailure(error, 'https://mcp.example/mcp');
    expect(failure.kind).toBe('permanent');
    expect(failure.error.message).toBe(
      `https://mcp.example/mcp: sign-in failed (${error.message})`,
    );
  });
});
