import type { ElicitRequestParams } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { fitAnswer, isSafeElicitation } from '../../src/core/elicitationChecks';

const url = (link: string) =>
  ({ mode: 'url', message: 'go', url: link, elicitationId: '1' }) as ElicitRequestParams;

describe('a URL-mode elicitation', () => {
  it('is safe only for https, or http on this machine', () => {
    for (const link of [
      'https://auth.example.com/x',
      'HTTPS://Auth.Example.com',
      'http://localhost:3000/x',
      'http://127.0.0.1/x',
      'http://[::1]:8080/',
    ]) {
      expect(isSafeElicitation(url(link)), link).toBe(true);
    }
    for (const link of [
      'javascript:alert(1)',
      ' javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      'file:///etc/passwd',
      'http://example.com',
      'http://localhost.evil.example/',
      'http://127.0.0.1.evil.example/',
      'ftp://example.com',
      'not a url',
    ]) {
      expect(isSafeElicitation(url(link)), link).toBe(false);
    }
  });

  it('an accepted answer carries no content', () => {
    expect(fitAnswer(url('https://x.example'), { action: 'accept', content: { a: 'b' } })).toEqual({
      action: 'accept',
    });
  });
});

const form = (requestedSchema: object) =>
  ({ mode: 'form', message: 'm', requestedSchema }) as unknown as ElicitRequestParams;

describe('a form answer', () => {
  it('is filled with defaults, as the SDK would, before required fields are checked', () => {
    const params = form({
      type: 'object',
      properties: { name: { type: 'string', default: 'Ada' }, n: { type: 'number' } },
      required: ['name'],
    });
    expect(fitAnswer(params, { action: 'accept', content: {} })).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
    });
    expect(fitAnswer(params, { action: 'accept', content: { n: 1.5 } })).toMatchObject({
      content: { name: 'Ada', n: 1.5 },
    });
  });

  it('multi-select choices come from items.enum or items.anyOf', () => {
    const params = form({
      type: 'object',
      properties: {
        a: { type: 'array', items: { type: 'string', enum: ['x', 'y'] } },
        b: { type: 'array', items: { anyOf: [{ const: 'p', title: 'P' }] } },
      },
    });
    expect(() =>
      fitAnswer(params, { action: 'accept', content: { a: ['x', 'y'], b: ['p'] } }),
    ).not.toThrow();
    expect(() => fitAnswer(params, { action: 'accept', content: { b: ['q'] } })).toThrow(
      /b must be one of "p"/,
    );
  });

  it('decline and cancel pass as they are; a field named like an Object method is not asked for', () => {
    const params = form({ type: 'object', properties: {} });
    expect(fitAnswer(params, { action: 'decline' })).toEqual({ action: 'decline' });
    expect(() =>
      fitAnswer(params, { action: 'accept', content: { constructor: 'x' } as never }),
    ).toThrow(/constructor was not asked for/);
  });
});
